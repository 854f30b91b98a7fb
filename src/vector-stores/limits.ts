import { readSettings, type Settings } from '../core/settings.js';

/**
 * The bounds one file's ingestion runs within (docs/files.md, "Ingestion limits"). Each is a setting; a
 * file that reaches one fails `invalid_file` with a message naming it, and is not tried again.
 */
export interface IngestLimits {
  /** Resident memory of an ingestion process (bytes); past it the process is killed and the file fails. */
  memoryBytes: number;
  /** Wall time of one file's extraction, chunking and embedding (ms). */
  timeoutMs: number;
  /** What a DOCX's parts, or a PDF's compressed streams, may inflate to in all (bytes). */
  inflatedBytes: number;
  /** Deepest nesting of HTML elements or JSON arrays and objects. */
  depth: number;
  /** Most pages of a PDF, parts (zip entries) of a DOCX. */
  pages: number;
}

const MB = 1024 * 1024;

/** The limits of these settings. */
export const limitsOf = (s: Settings): IngestLimits => ({
  memoryBytes: s.ingestMemoryMb * MB,
  timeoutMs: s.ingestTimeoutMs,
  inflatedBytes: s.ingestMaxInflatedMb * MB,
  depth: s.ingestMaxDepth,
  pages: s.ingestMaxPages,
});

/** A file past one of the limits: names the limit and the setting that raises it. */
export class LimitError extends Error {}

/** The message of a limit reached: what was found, the bound, and the setting that moves it. */
export const beyond = (filename: string, what: string, bound: string, setting: string) =>
  new LimitError(`The file ${filename} ${what}, beyond the limit of ${bound} (--${setting}).`);

/** The limits of the default settings (unit tests, and callers that name none). */
export const DEFAULT_LIMITS: IngestLimits = limitsOf(readSettings([], {}).settings);
