import type { Readable } from 'node:stream';
import { ApiError, invalid, notFound } from '../core/errors.js';
import { wallNow } from '../core/clock.js';
import { FILE_ID, newId } from '../core/ids.js';
import type { Ctx } from '../core/module.js';
import type { ListPage, ListParams } from '../core/pagination.js';
import type { Exec, Tx } from '../store/db.js';
import { UPLOAD_PURPOSES, type FileObject } from './schemas.js';
import { checkPart } from './multipart.js';
import * as store from './store.js';
import type { FileStorage } from './storage/interface.js';

export type { FileObject } from './schemas.js';
/** The multipart form's limits and checks, for other areas' upload routes (containers). */
export { checkPart, FORM_LIMITS, formError } from './multipart.js';

/** Job kinds of this area. */
export const EXPIRE_FILE = 'files.expire';
export const SWEEP_UPLOAD = 'files.sweep_upload';

/** Runs in the transaction that deletes a file (a vector store drops the file's chunks with it). */
export type FileDeletedListener = (tx: Tx, projectId: string, fileId: string) => Promise<void>;

/** What the files area publishes as `ctx.services.files`. */
export interface FilesService {
  storage: FileStorage;
  /** Listeners of file deletion (other areas register theirs in `init`). */
  deleted: FileDeletedListener[];
}

/** Files of purpose `batch` expire after 30 days unless the upload says otherwise (OpenAPI: FileExpirationAfter). */
const BATCH_EXPIRY_SECONDS = 30 * 86_400;
/**
 * A partial upload left by a process that died is removed this long after it started, on the wall clock:
 * a test that moves the Standin clock ahead must not sweep bytes whose row is about to be committed.
 */
const SWEEP_AFTER_MS = 3_600_000;

/** Schedules the removal of a new file's bytes, should the row that claims them never be committed. */
async function scheduleSweep(ctx: Ctx, fileId: string): Promise<void> {
  const payload: SweepPayload = { fileId, due: wallNow() + SWEEP_AFTER_MS };
  await ctx.jobs.enqueue(ctx.store.db, SWEEP_UPLOAD, payload, { runAt: ctx.clock.now() + SWEEP_AFTER_MS });
}

/** `due` (wall-clock ms) is absent from jobs queued before it was added: those run when the Standin clock says. */
interface SweepPayload {
  fileId: string;
  due?: number;
}

/** One part of a multipart upload, as the route hands them over (busboy's, via @fastify/multipart). */
export interface UploadPart {
  type: 'file' | 'field';
  fieldname: string;
  filename?: string;
  /** A file part's bytes; `truncated` once it passed the size limit. */
  file?: Readable & { truncated?: boolean };
  value?: unknown;
  /** Cut by busboy at the form limits (it truncates without an error). */
  fieldnameTruncated?: boolean;
  valueTruncated?: boolean;
}

/** Longest file name kept (a client controls it). */
const MAX_FILENAME = 1024;

const FIELDS = ['purpose', 'expires_after[anchor]', 'expires_after[seconds]'];

/** Platform file ids read `file-…` (the time-ordered tail of every Standin id, so ids still sort by creation). */
const newFileId = (ctx: Ctx) => `file-${newId('file', ctx.clock).slice(5)}`;

export const fileObject = (row: store.FileRow): FileObject => ({
  id: row.id,
  object: 'file',
  bytes: Number(row.bytes),
  created_at: Number(row.created_at),
  expires_at: row.expires_at === null ? null : Number(row.expires_at),
  filename: row.filename,
  purpose: row.purpose,
  status: 'processed',
  status_details: null,
});

function checkPurpose(value: string) {
  if (!(UPLOAD_PURPOSES as readonly string[]).includes(value)) {
    throw invalid(
      `Invalid value for 'purpose': '${value}'. Supported values are: ${UPLOAD_PURPOSES.map((p) => `'${p}'`).join(', ')}.`,
      'purpose',
      'invalid_value',
    );
  }
}

/** `expires_after` of an upload: anchor `created_at`, 3600 to 2592000 seconds (both or neither). */
function expirySeconds(fields: Record<string, string>): number | undefined {
  const anchor = fields['expires_after[anchor]'];
  const seconds = fields['expires_after[seconds]'];
  if (anchor === undefined && seconds === undefined) return undefined;
  if (anchor === undefined)
    throw invalid("Missing required parameter: 'expires_after.anchor'.", 'expires_after.anchor', 'missing_required_parameter');
  if (anchor !== 'created_at')
    throw invalid(
      `Invalid value for 'expires_after.anchor': '${anchor}'. Supported values are: 'created_at'.`,
      'expires_after.anchor',
      'invalid_value',
    );
  if (seconds === undefined)
    throw invalid("Missing required parameter: 'expires_after.seconds'.", 'expires_after.seconds', 'missing_required_parameter');
  const n = /^\d{1,10}$/.test(seconds) ? Number(seconds) : NaN;
  if (!(n >= 3600 && n <= 2_592_000))
    throw invalid("'expires_after.seconds' must be an integer from 3600 to 2592000.", 'expires_after.seconds', 'invalid_value');
  return n;
}

/**
 * `POST /v1/files`: streams the `file` part to storage as it arrives (clients send it before `purpose`,
 * so the fields are checked once the form is read, and the stored bytes dropped if they are wrong).
 * A file larger than `--file-upload-limit` is refused with 413 and nothing is kept.
 */
export async function uploadFile(ctx: Ctx, projectId: string, parts: AsyncIterable<UploadPart>): Promise<FileObject> {
  const { storage } = ctx.services.files;
  const id = newFileId(ctx);
  const fields: Record<string, string> = {};
  let upload: { filename: string; bytes: number } | undefined;
  let writing = false;
  try {
    for await (const part of parts) {
      try {
        checkPart(part);
      } catch (err) {
        part.file?.resume();
        throw err;
      }
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || upload || writing) {
          part.file?.resume();
          throw part.fieldname !== 'file'
            ? invalid(`Unrecognized request argument supplied: '${part.fieldname}'.`, part.fieldname, 'unknown_parameter')
            : invalid('Send one file per request.', 'file', 'invalid_value');
        }
        if ((part.filename ?? '').length > MAX_FILENAME) {
          part.file?.resume();
          throw invalid(`The file name must be at most ${MAX_FILENAME} characters.`, 'file', 'invalid_value');
        }
        writing = true;
        // Should this process die mid-upload, the job removes what it left.
        await scheduleSweep(ctx, id);
        const bytes = await storage.write(id, part.file!);
        if (part.file!.truncated) {
          throw new ApiError(
            'invalid_request_error',
            `The file is larger than the ${ctx.settings.fileUploadLimit} bytes this server accepts.`,
            {
              status: 413,
              param: 'file',
              code: 'file_too_large',
            },
          );
        }
        upload = { filename: part.filename || 'upload', bytes };
        continue;
      }
      if (!FIELDS.includes(part.fieldname))
        throw invalid(`Unrecognized request argument supplied: '${part.fieldname}'.`, part.fieldname, 'unknown_parameter');
      // A form field sent twice is ambiguous: refused, not settled by whichever came last.
      if (part.fieldname in fields) throw invalid(`'${part.fieldname}' is given more than once.`, part.fieldname, 'duplicate_parameter');
      fields[part.fieldname] = String(part.value);
      // A bad purpose sent ahead of the file is refused before any byte is stored.
      if (part.fieldname === 'purpose') checkPurpose(fields.purpose);
    }
    if (fields.purpose === undefined) throw invalid("Missing required parameter: 'purpose'.", 'purpose', 'missing_required_parameter');
    const seconds = expirySeconds(fields) ?? (fields.purpose === 'batch' ? BATCH_EXPIRY_SECONDS : undefined);
    if (!upload) throw invalid("Missing required parameter: 'file'.", 'file', 'missing_required_parameter');
    const createdAt = ctx.clock.nowSeconds();
    const row = {
      id,
      project_id: projectId,
      filename: upload.filename,
      bytes: upload.bytes,
      purpose: fields.purpose,
      created_at: createdAt,
      expires_at: seconds === undefined ? null : createdAt + seconds,
    };
    // A file that expires is written with its expiry's job; one that does not, in a statement of its own
    // (a round trip on PostgreSQL, where a transaction takes three).
    if (row.expires_at === null) await store.insertFileAlone(ctx.store.db, row);
    else
      await ctx.store.db.transaction().execute(async (tx) => {
        await store.insertFile(tx, row);
        await ctx.jobs.enqueue(tx, EXPIRE_FILE, { fileId: id }, { runAt: row.expires_at! * 1000 });
      });
    return fileObject(row);
  } catch (err) {
    if (writing) await storage.remove(id).catch((e) => ctx.log.warn({ err: e, file: id }, 'removing a refused upload failed'));
    throw err;
  }
}

/**
 * A file Standin generates (code_interpreter's outputs, purpose `assistants_output`): its bytes are stored
 * now, its row is written by `insert` inside the caller's transaction, so the file exists exactly when
 * what produced it is committed. Bytes whose row never comes (a rollback, a crash) are removed by the
 * upload sweep.
 */
export async function stageGeneratedFile(
  ctx: Ctx,
  projectId: string,
  input: { filename: string; purpose: string; bytes: Uint8Array },
): Promise<{ file: FileObject; insert: (tx: Tx) => Promise<void> }> {
  const id = newFileId(ctx);
  await scheduleSweep(ctx, id);
  const data = Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength);
  const bytes = await ctx.services.files.storage.write(
    id,
    (async function* () {
      yield data;
    })(),
  );
  const row = {
    id,
    project_id: projectId,
    filename: input.filename.slice(0, MAX_FILENAME),
    bytes,
    purpose: input.purpose,
    created_at: ctx.clock.nowSeconds(),
    expires_at: null,
  };
  return { file: fileObject(row), insert: (tx) => store.insertFile(tx, row) };
}

/** A live file of the project, or 404. */
export async function getFile(ctx: Ctx, projectId: string, fileId: string, exec: Exec = ctx.store.db): Promise<FileObject> {
  // Not an id Standin makes: no such file, whatever a row may say (the storage refuses such names too).
  if (!FILE_ID.test(fileId)) throw notFound('file', fileId);
  const row = await store.getFile(exec, projectId, fileId, ctx.clock.nowSeconds());
  if (!row) throw notFound('file', fileId);
  return fileObject(row);
}

/** getFile of several files: each found, by id (ids Standin does not make are never found). */
export async function getFiles(
  ctx: Ctx,
  projectId: string,
  fileIds: readonly string[],
  exec: Exec = ctx.store.db,
): Promise<Map<string, FileObject>> {
  const rows = await store.getFiles(exec, projectId, [...new Set(fileIds.filter((id) => FILE_ID.test(id)))], ctx.clock.nowSeconds());
  return new Map(rows.map((row) => [row.id, fileObject(row)]));
}

/** The project of a live file, found by its id alone (the dashboard's search); undefined when none. */
export async function locateFile(ctx: Ctx, fileId: string): Promise<{ project_id: string } | undefined> {
  const row = await store.getFileById(ctx.store.db, fileId);
  const now = ctx.clock.nowSeconds();
  return row && (row.expires_at === null || Number(row.expires_at) > now) ? { project_id: row.project_id } : undefined;
}

/** `GET /v1/files`: the project's live files, newest first unless `order=asc`. */
export function listFiles(ctx: Ctx, projectId: string, params: ListParams & { purpose?: string }): Promise<ListPage<FileObject>> {
  return store.listFiles(ctx.store.db, projectId, ctx.clock.nowSeconds(), params, fileObject);
}

/** `DELETE /v1/files/{id}`: a live file of the project, or 404. */
export async function deleteFile(ctx: Ctx, projectId: string, fileId: string): Promise<{ id: string; object: 'file'; deleted: true }> {
  await getFile(ctx, projectId, fileId);
  if (!(await removeFile(ctx, projectId, fileId))) throw notFound('file', fileId);
  return { id: fileId, object: 'file', deleted: true };
}

/** Removes a file: its row and what other areas keep of it (listeners) in one transaction, then its bytes. False when it was gone. */
async function removeFile(ctx: Ctx, projectId: string, fileId: string): Promise<boolean> {
  const { storage, deleted } = ctx.services.files;
  const removed = await ctx.store.db.transaction().execute(async (tx) => {
    if (!(await store.deleteFile(tx, fileId))) return false;
    for (const listener of deleted) await listener(tx, projectId, fileId);
    if (storage.kind === 'db') await storage.remove(fileId, tx);
    return true;
  });
  if (removed && storage.kind === 'fs') await storage.remove(fileId);
  return removed;
}

/** The bytes of a live file, streamed (`GET /v1/files/{id}/content`). */
export async function openFileContent(ctx: Ctx, projectId: string, fileId: string): Promise<{ file: FileObject; stream: Readable }> {
  const file = await getFile(ctx, projectId, fileId);
  return { file, stream: await ctx.services.files.storage.open(fileId, file.bytes) };
}

/** The whole content of a live file, for readers that need it at once (a container's file, a response's input); refused above `maxBytes`. */
export async function readFileBytes(
  ctx: Ctx,
  projectId: string,
  fileId: string,
  maxBytes: number,
): Promise<{ file: FileObject; data: Buffer }> {
  const file = await getFile(ctx, projectId, fileId);
  return { file, data: Buffer.concat(await partsOf(ctx, file, maxBytes)) };
}

const tooLarge = (fileId: string, maxBytes: number) =>
  invalid(`The file ${fileId} is larger than ${maxBytes} bytes.`, 'file_id', 'file_too_large');

/** A file's bytes as storage reads them (its row just read), refused above `maxBytes` before any is read. */
async function partsOf(ctx: Ctx, file: FileObject, maxBytes: number): Promise<Buffer[]> {
  if (file.bytes > maxBytes) throw tooLarge(file.id, maxBytes);
  const parts: Buffer[] = [];
  for await (const chunk of await ctx.services.files.storage.open(file.id, file.bytes)) parts.push(chunk as Buffer);
  return parts;
}

/**
 * The bytes of a live file whose row the caller has just read (`getFile`): where they are on this
 * machine's disk, for a reader in another process (the ingestion processes), or as storage read them
 * where they are kept in the database (not copied into one buffer: a copy of a large file holds the
 * thread); refused above `maxBytes`.
 */
export async function bytesOfFile(ctx: Ctx, file: FileObject, maxBytes: number): Promise<{ path: string; bytes: number } | Buffer[]> {
  const { storage } = ctx.services.files;
  if (storage.localPath && file.bytes <= maxBytes) return { path: storage.localPath(file.id), bytes: file.bytes };
  return partsOf(ctx, file, maxBytes);
}

/** Job: removes a file once its `expires_at` has passed (the clock may have been moved back by a reset: then it waits). */
export async function expireFile(ctx: Ctx, payload: { fileId: string }): Promise<void | { retryAt: number }> {
  const row = await store.getFileById(ctx.store.db, payload.fileId);
  if (!row || row.expires_at === null) return;
  const due = Number(row.expires_at) * 1000;
  if (due > ctx.clock.now()) return { retryAt: due };
  await removeFile(ctx, row.project_id, row.id);
}

/** Job: removes what an upload cut off by a crash left in storage (nothing, when the upload completed). */
export async function sweepUpload(ctx: Ctx, payload: SweepPayload): Promise<void | { retryAt: number }> {
  const early = (payload.due ?? 0) - wallNow();
  if (early > 0) return { retryAt: ctx.clock.now() + early };
  if (await store.getFileById(ctx.store.db, payload.fileId)) return;
  await ctx.services.files.storage.remove(payload.fileId);
}

/**
 * Writes a new file's bytes from a stream (a batch's output, assembled line by line), never holding them
 * whole. The file is not visible until `insertWrittenFile` commits its row; should that never happen (a
 * crash), the sweep job removes the bytes.
 */
export async function writeFileBytes(ctx: Ctx, source: AsyncIterable<Buffer>): Promise<{ id: string; bytes: number }> {
  const id = newFileId(ctx);
  await scheduleSweep(ctx, id);
  return { id, bytes: await ctx.services.files.storage.write(id, source) };
}

/** Makes bytes written by `writeFileBytes` a file of the project, in the caller's transaction. */
export async function insertWrittenFile(
  ctx: Ctx,
  tx: Exec,
  projectId: string,
  written: { id: string; bytes: number },
  meta: { filename: string; purpose: string; expiresAfterSeconds?: number | null },
): Promise<FileObject> {
  const createdAt = ctx.clock.nowSeconds();
  const row = {
    id: written.id,
    project_id: projectId,
    filename: meta.filename,
    bytes: written.bytes,
    purpose: meta.purpose,
    created_at: createdAt,
    expires_at: meta.expiresAfterSeconds == null ? null : createdAt + meta.expiresAfterSeconds,
  };
  await store.insertFile(tx, row);
  if (row.expires_at !== null) await ctx.jobs.enqueue(tx, EXPIRE_FILE, { fileId: row.id }, { runAt: row.expires_at * 1000 });
  return fileObject(row);
}
