import type * as HtmlToText from 'html-to-text';
import type * as Mammoth from 'mammoth';
import type * as Unpdf from 'unpdf';
import { lazy } from '../store/lazy.js';

/**
 * Text of an uploaded file, by its extension: plain text and source code as UTF-8, HTML through
 * html-to-text, PDF through unpdf (pdf.js), DOCX through mammoth. Libraries load on first use.
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

/** The text of a file; throws ExtractError for a type Standin does not index or a file it cannot read. */
export async function extractText(filename: string, data: Buffer): Promise<string> {
  const ext = extensionOf(filename);
  if (TEXT.has(ext)) return utf8(data, filename);
  if (HTML.has(ext))
    return htmlToText().convert(utf8(data, filename), {
      wordwrap: false,
      selectors: [
        { selector: 'img', format: 'skip' },
        { selector: 'a', options: { ignoreHref: true } },
      ],
    });
  if (ext === 'pdf') {
    try {
      const pdf = await unpdf().getDocumentProxy(new Uint8Array(data), { verbosity: 0 });
      const { text } = await unpdf().extractText(pdf, { mergePages: true });
      await pdf.destroy();
      return text;
    } catch (err) {
      throw new ExtractError('invalid_file', `The PDF ${filename} could not be read: ${(err as Error).message}`);
    }
  }
  if (ext === 'docx') {
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
