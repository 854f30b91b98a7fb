import { ApiError, frameworkError, invalid } from '../core/errors.js';
import { nulRefusal } from '../core/nul.js';

/**
 * The limits of the upload form (busboy's, through @fastify/multipart): one file and three fields are
 * all `POST /v1/files` takes, so a few more than that is already a hostile form.
 */
export const FORM_LIMITS = { files: 2, fields: 8, parts: 10, fieldSize: 4096, fieldNameSize: 100, headerPairs: 100 } as const;

/** A multipart limit or parse failure in the platform's words, naming the limit; anything else unchanged. */
export function formError(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  const e = err as { code?: string; statusCode?: number; message?: string };
  switch (e.code) {
    case 'FST_PARTS_LIMIT':
      return invalid(`The form has more than ${FORM_LIMITS.parts} parts.`, null, 'too_many_parts');
    case 'FST_FILES_LIMIT':
      return invalid('Send one file per request.', 'file', 'too_many_files');
    case 'FST_FIELDS_LIMIT':
      return invalid(`The form has more than ${FORM_LIMITS.fields} fields.`, null, 'too_many_fields');
  }
  const framework = frameworkError(e);
  if (framework) return framework;
  // Busboy's own failures (no boundary, a part cut short) carry no code: the client's form is malformed.
  if (e.code === undefined) return invalid(`The multipart body could not be read: ${e.message ?? 'malformed'}.`, null, 'invalid_multipart');
  return err;
}

/** What busboy reports of a part besides its value: truncation by the limits. */
interface PartFlags {
  fieldname: string;
  fieldnameTruncated?: boolean;
  valueTruncated?: boolean;
}

/**
 * Refuses a form part whose name or value busboy cut at a limit (it truncates silently), or whose name,
 * value or file name holds a NUL (PostgreSQL cannot store one; both stores answer alike).
 */
export function checkPart(part: PartFlags & { filename?: string; value?: unknown }): void {
  if (part.fieldnameTruncated)
    throw invalid(`A form field name is longer than ${FORM_LIMITS.fieldNameSize} bytes.`, null, 'unknown_parameter');
  const refused = nulRefusal(part.fieldname, '(a field name)');
  if (refused) throw refused;
  if (part.valueTruncated)
    throw invalid(`'${part.fieldname}' must be at most ${FORM_LIMITS.fieldSize} bytes.`, part.fieldname, 'string_too_long');
  if (typeof part.value === 'string') {
    const inValue = nulRefusal(part.value, part.fieldname);
    if (inValue) throw inValue;
  }
  if (part.filename?.includes('\0'))
    throw invalid(`The file name of '${part.fieldname}' must not contain NUL (\\u0000) characters.`, part.fieldname, 'invalid_value');
}
