import type * as HtmlToText from 'html-to-text';
import type * as Mammoth from 'mammoth';
import type * as Unpdf from 'unpdf';
import { lazy } from '../store/lazy.js';
import { checkHtmlDepth, checkJsonDepth, checkPdf, checkZip } from './bounds.js';
import { beyond, DEFAULT_LIMITS, LimitError, type IngestLimits } from './limits.js';

/**
 * Text of an uploaded file, by its extension: plain text and source code as UTF-8, HTML through
 * html-to-text, PDF through unpdf (pdf.js), DOCX through mammoth. Libraries load on first use.
 * Runs in an ingestion process (ingest-child.ts), within the limits given (bounds.ts checks them first).
 */
const unpdf = lazy<typeof Unpdf>('unpdf');
const mammoth = lazy<typeof Mammoth>('mammoth');
const htmlToText = lazy<typeof HtmlToText>('html-to-text');

/** Why a file cannot be indexed, in the platform's `last_error` codes. */
export class ExtractError extends Error {
  constructor(
    readonly code: 'unsupported_file' | 'invalid_file',
    message: string,
  ) {
    super(message);
  }
}

/** Read as UTF-8 text (the documents of the task, and the source-code types the platform indexes as text). */
const TEXT = new Set([
  'txt',
  'md',
  'markdown',
  'json',
  'csv',
  'c',
  'cpp',
  'cs',
  'css',
  'go',
  'java',
  'js',
  'ts',
  'php',
  'py',
  'rb',
  'sh',
  'tex',
]);
const HTML = new Set(['html', 'htm']);

/** The extensions Standin indexes. */
export const SUPPORTED_EXTENSIONS = [...TEXT, ...HTML, 'pdf', 'docx'].sort();

const extensionOf = (filename: string) => /\.([A-Za-z0-9]+)$/.exec(filename)?.[1].toLowerCase() ?? '';

function utf8(data: Buffer, filename: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(data).replace(/^\uFEFF/, '');
  } catch {
    throw new ExtractError('invalid_file', `The file ${filename} is not valid UTF-8 text.`);
  }
}

/** Whether extractText gives a file of this name as its bytes decoded from UTF-8 (a leading byte-order mark dropped), nothing else. */
export const isDecodedAsIs = (filename: string) => TEXT.has(extensionOf(filename));

/** The text of a file; throws ExtractError for a type Standin does not index or a file it cannot read, LimitError past a limit. */
export async function extractText(filename: string, data: Buffer, limits: IngestLimits = DEFAULT_LIMITS): Promise<string> {
  const ext = extensionOf(filename);
  if (TEXT.has(ext)) {
    const text = utf8(data, filename);
    if (ext === 'json') checkJsonDepth(filename, text, limits);
    return text;
  }
  if (HTML.has(ext)) {
    const html = utf8(data, filename);
    checkHtmlDepth(filename, html, limits);
    return htmlToText().convert(html, {
      wordwrap: false,
      selectors: [
        { selector: 'img', format: 'skip' },
        { selector: 'a', options: { ignoreHref: true } },
      ],
    });
  }
  if (ext === 'pdf') {
    await checkPdf(filename, data, limits);
    let pdf: Awaited<ReturnType<typeof Unpdf.getDocumentProxy>>;
    try {
      pdf = await unpdf().getDocumentProxy(new Uint8Array(data), { verbosity: 0 });
    } catch (err) {
      throw new ExtractError('invalid_file', `The PDF ${filename} could not be read: ${(err as Error).message}`);
    }
    try {
      if (pdf.numPages > limits.pages) throw beyond(filename, `has ${pdf.numPages} pages`, `${limits.pages}`, 'ingest-max-pages');
      const { text } = await unpdf().extractText(pdf, { mergePages: true });
      return text;
    } catch (err) {
      if (err instanceof LimitError) throw err;
      throw new ExtractError('invalid_file', `The PDF ${filename} could not be read: ${(err as Error).message}`);
    } finally {
      await pdf.destroy();
    }
  }
  if (ext === 'docx') {
    await checkZip(filename, data, limits);
    try {
      return (await mammoth().extractRawText({ buffer: data })).value;
    } catch (err) {
      throw new ExtractError('invalid_file', `The DOCX ${filename} could not be read: ${(err as Error).message}`);
    }
  }
  throw new ExtractError(
    'unsupported_file',
    `The file type${ext ? ` .${ext}` : ''} of ${filename} is not supported for retrieval. Supported: ${SUPPORTED_EXTENSIONS.map((e) => `.${e}`).join(', ')}.`,
  );
}
