import { Readable } from 'node:stream';
import type { ExecuteResult, SandboxFile } from '../code-interpreter/types.js';
import { ApiError, invalid, notFound } from '../core/errors.js';
import { idPattern, newId } from '../core/ids.js';
import type { Ctx } from '../core/module.js';
import type { ListPage, ListParams } from '../core/pagination.js';
import { checkPart, getFile as getPlatformFile, readFileBytes, type UploadPart } from '../files/service.js';
import { DEFAULT_EXPIRY_MINUTES, type ContainerFileObject, type ContainerObject, type CreateContainerBody } from './schemas.js';
import * as store from './store.js';

export type { ContainerFileObject, ContainerObject } from './schemas.js';

/**
 * Containers: a named sandbox of the code_interpreter executor (one Python session, keyed by the
 * container's id) with its files under /mnt/data/. The files live in the store, so every instance and a
 * snapshot have them; the Python state lives in the session of the instance that ran the code, until the
 * container expires (idle `expires_after.minutes` on the Standin clock) or the executor closes the session.
 */

/** The largest container file (the sandbox holds its files in memory; the same bound as the Assistants tool's inputs). */
export const MAX_CONTAINER_FILE_BYTES = 64 * 1024 * 1024;
/** Files a container holds at most. */
export const MAX_CONTAINER_FILES = 1000;
/** Bytes a container's files take at most together: all of them go into the sandbox's memory. */
export const MAX_CONTAINER_BYTES = 256 * 1024 * 1024;
/** The longest file name kept (the path is /mnt/data/<name>). */
const MAX_NAME = 255;

export const CONTAINER_ID = idPattern('cntr');
export const CONTAINER_FILE_ID = idPattern('cfile');
const SANDBOX_ROOT = '/mnt/data/';

export const isExpired = (row: store.ContainerRow, nowSeconds: number) =>
  nowSeconds >= Number(row.last_active_at) + Number(row.expires_minutes) * 60;

export const containerObject = (row: store.ContainerRow, nowSeconds: number): ContainerObject => ({
  id: row.id,
  object: 'container',
  name: row.name,
  created_at: Number(row.created_at),
  status: isExpired(row, nowSeconds) ? 'expired' : 'running',
  last_active_at: Number(row.last_active_at),
  expires_after: { anchor: 'last_active_at', minutes: Number(row.expires_minutes) },
  memory_limit: row.memory_limit as ContainerObject['memory_limit'],
});

export const containerFileObject = (row: store.ContainerFileRow): ContainerFileObject => ({
  id: row.id,
  object: 'container.file',
  created_at: Number(row.created_at),
  bytes: Number(row.bytes),
  container_id: row.container_id,
  path: row.path,
  source: row.source as ContainerFileObject['source'],
});

/** A file name as a path under /mnt/data/: its last segment, never empty, `.` or `..`. */
export function sandboxPathOf(filename: string): string {
  let name = filename.split(/[/\\]/).pop() ?? '';
  if (name === '.' || name === '..') name = '';
  return SANDBOX_ROOT + (name || 'upload').slice(0, MAX_NAME);
}

/** A path a container file may have: one segment or more under /mnt/data/, nothing that leaves it (a snapshot's row may say anything). */
const validPath = (path: string) =>
  path.startsWith(SANDBOX_ROOT) &&
  path.length > SANDBOX_ROOT.length &&
  path.length <= 4096 &&
  !path.includes('\0') &&
  !path.split('/').some((seg, i) => i > 0 && (seg === '' || seg === '.' || seg === '..'));

const expiredError = (id: string) => invalid(`Container ${id} has expired; create a new container.`, 'container_id', 'container_expired');

/** A container of the project, or 404. */
async function container(ctx: Ctx, projectId: string, id: string): Promise<store.ContainerRow> {
  const row = CONTAINER_ID.test(id) ? await store.getContainer(ctx.store.db, projectId, id) : undefined;
  if (!row) throw notFound('container', id, 'container_id');
  return row;
}

/** A running container of the project: 404 when there is none, 400 when it has expired. */
async function running(ctx: Ctx, projectId: string, id: string): Promise<store.ContainerRow> {
  const row = await container(ctx, projectId, id);
  if (isExpired(row, ctx.clock.nowSeconds())) throw expiredError(id);
  return row;
}

/** Keeps a new file within the container's bounds (count and total bytes), or says which it would pass. */
async function checkRoom(ctx: Ctx, containerId: string, bytes: number, replacing?: store.ContainerFileRow): Promise<void> {
  if (bytes > MAX_CONTAINER_FILE_BYTES)
    throw new ApiError('invalid_request_error', `A container file holds at most ${MAX_CONTAINER_FILE_BYTES} bytes.`, {
      status: 413,
      param: 'file',
      code: 'file_too_large',
    });
  const used = await store.countFiles(ctx.store.db, containerId);
  const files = used.files + (replacing ? 0 : 1);
  const total = used.bytes - Number(replacing?.bytes ?? 0) + bytes;
  if (files > MAX_CONTAINER_FILES) throw invalid(`A container holds at most ${MAX_CONTAINER_FILES} files.`, 'file', 'too_many_files');
  if (total > MAX_CONTAINER_BYTES)
    throw invalid(`A container's files take at most ${MAX_CONTAINER_BYTES} bytes together.`, 'file', 'container_full');
}

/** `POST /v1/containers`: the container and a copy of each `file_ids` file at /mnt/data/<its name>. */
export async function createContainer(ctx: Ctx, projectId: string, body: CreateContainerBody): Promise<ContainerObject> {
  if (body.skills?.length)
    throw invalid(
      "'skills' is not supported by Standin: its containers run the code_interpreter executor only.",
      'skills',
      'unsupported_parameter',
    );
  if (body.network_policy?.type === 'allowlist')
    throw invalid(
      "'network_policy.type' 'allowlist' is not supported by Standin: its sandboxes have no network ('disabled').",
      'network_policy.type',
      'unsupported_parameter',
    );
  const ids = [...new Set(body.file_ids ?? [])];
  const copies: { path: string; data: Buffer }[] = [];
  let total = 0;
  for (const [i, fileId] of ids.entries()) {
    const param = `file_ids[${i}]`;
    const file = await getPlatformFile(ctx, projectId, fileId).catch(() => {
      throw notFound('file', fileId, param);
    });
    if (file.bytes > MAX_CONTAINER_FILE_BYTES)
      throw invalid(`The file ${fileId} is larger than ${MAX_CONTAINER_FILE_BYTES} bytes.`, param, 'file_too_large');
    total += file.bytes;
    if (total > MAX_CONTAINER_BYTES)
      throw invalid(`A container's files take at most ${MAX_CONTAINER_BYTES} bytes together.`, param, 'container_full');
    const { data } = await readFileBytes(ctx, projectId, fileId, MAX_CONTAINER_FILE_BYTES);
    copies.push({ path: sandboxPathOf(file.filename), data });
  }
  const now = ctx.clock.nowSeconds();
  const row = {
    id: newId('cntr', ctx.clock),
    project_id: projectId,
    name: body.name,
    created_at: now,
    last_active_at: now,
    expires_minutes: body.expires_after?.minutes ?? DEFAULT_EXPIRY_MINUTES,
    memory_limit: body.memory_limit ?? '1g',
  };
  await ctx.store.db.transaction().execute(async (tx) => {
    await store.insertContainer(tx, row);
    // Two files of one name: the later one is what /mnt/data/<name> holds, as a copy onto a folder would leave it.
    const byPath = new Map(copies.map((c) => [c.path, c]));
    for (const c of byPath.values())
      await store.putFile(
        tx,
        {
          id: newId('cfile', ctx.clock),
          container_id: row.id,
          project_id: projectId,
          path: c.path,
          bytes: c.data.length,
          source: 'user',
          created_at: now,
        },
        c.data,
      );
  });
  return containerObject(row, now);
}

export async function getContainer(ctx: Ctx, projectId: string, id: string): Promise<ContainerObject> {
  return containerObject(await container(ctx, projectId, id), ctx.clock.nowSeconds());
}

export async function listContainers(
  ctx: Ctx,
  projectId: string,
  params: ListParams & { name?: string },
): Promise<ListPage<ContainerObject>> {
  const page = await store.listContainers(ctx.store.db, projectId, params);
  const now = ctx.clock.nowSeconds();
  return { ...page, data: page.data.map((r) => containerObject(r, now)) };
}

/** `DELETE /v1/containers/{id}`: its files go with it, and its Python session ends. */
export async function deleteContainer(
  ctx: Ctx,
  projectId: string,
  id: string,
): Promise<{ id: string; object: 'container.deleted'; deleted: true }> {
  await container(ctx, projectId, id);
  if (!(await ctx.store.db.transaction().execute((tx) => store.deleteContainer(tx, id)))) throw notFound('container', id, 'container_id');
  await ctx.services.codeInterpreter.closeSession(id);
  return { id, object: 'container.deleted', deleted: true };
}

// Files

/** Stores a user's file at `path` (a file already there is replaced), and marks the container active. */
async function addUserFile(ctx: Ctx, projectId: string, c: store.ContainerRow, path: string, data: Buffer): Promise<ContainerFileObject> {
  const there = await store.fileAtPath(ctx.store.db, c.id, path);
  await checkRoom(ctx, c.id, data.length, there);
  const now = ctx.clock.nowSeconds();
  const row = {
    id: newId('cfile', ctx.clock),
    container_id: c.id,
    project_id: projectId,
    path,
    bytes: data.length,
    source: 'user',
    created_at: now,
  };
  await ctx.store.db.transaction().execute(async (tx) => {
    if (there) await store.deleteFile(tx, there.id);
    await store.putFile(tx, row, data);
    await store.touchContainer(tx, c.id, now);
  });
  return containerFileObject(row);
}

/** `POST /v1/containers/{id}/files` with `{file_id}`: a copy of a file of `/v1/files`. */
export async function copyFileIn(ctx: Ctx, projectId: string, containerId: string, fileId: string): Promise<ContainerFileObject> {
  const c = await running(ctx, projectId, containerId);
  const file = await getPlatformFile(ctx, projectId, fileId).catch(() => {
    throw notFound('file', fileId, 'file_id');
  });
  if (file.bytes > MAX_CONTAINER_FILE_BYTES)
    throw invalid(`The file ${fileId} is larger than ${MAX_CONTAINER_FILE_BYTES} bytes.`, 'file_id', 'file_too_large');
  const { data } = await readFileBytes(ctx, projectId, fileId, MAX_CONTAINER_FILE_BYTES);
  return addUserFile(ctx, projectId, c, sandboxPathOf(file.filename), data);
}

/**
 * `POST /v1/containers/{id}/files` as multipart/form-data: one `file` part, read whole up to the smaller of
 * MAX_CONTAINER_FILE_BYTES and `--file-upload-limit` (the sandbox takes a container's files whole anyway).
 */
export async function uploadFileIn(
  ctx: Ctx,
  projectId: string,
  containerId: string,
  parts: AsyncIterable<UploadPart>,
): Promise<ContainerFileObject> {
  const c = await running(ctx, projectId, containerId);
  const limit = Math.min(MAX_CONTAINER_FILE_BYTES, ctx.settings.fileUploadLimit);
  let upload: { filename: string; data: Buffer } | undefined;
  for await (const part of parts) {
    try {
      checkPart(part);
      if (part.fieldname !== 'file' || part.type !== 'file')
        throw invalid(`Unrecognized request argument supplied: '${part.fieldname}'.`, part.fieldname, 'unknown_parameter');
      if (upload) throw invalid('Send one file per request.', 'file', 'invalid_value');
    } catch (err) {
      part.file?.resume();
      throw err;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of part.file!) {
      size += (chunk as Buffer).length;
      if (size > limit) {
        part.file!.resume();
        throw new ApiError('invalid_request_error', `The file is larger than the ${limit} bytes a container file may hold here.`, {
          status: 413,
          param: 'file',
          code: 'file_too_large',
        });
      }
      chunks.push(chunk as Buffer);
    }
    if (part.file!.truncated)
      throw new ApiError('invalid_request_error', `The file is larger than the ${limit} bytes a container file may hold here.`, {
        status: 413,
        param: 'file',
        code: 'file_too_large',
      });
    upload = { filename: part.filename ?? '', data: Buffer.concat(chunks, size) };
  }
  if (!upload) throw invalid("Missing required parameter: 'file' (or send JSON with 'file_id').", 'file', 'missing_required_parameter');
  return addUserFile(ctx, projectId, c, sandboxPathOf(upload.filename), upload.data);
}

async function containerFile(ctx: Ctx, projectId: string, containerId: string, fileId: string): Promise<store.ContainerFileRow> {
  await container(ctx, projectId, containerId);
  const row = CONTAINER_FILE_ID.test(fileId) ? await store.getFile(ctx.store.db, containerId, fileId) : undefined;
  if (!row) throw notFound('container file', fileId, 'file_id');
  return row;
}

export async function listContainerFiles(
  ctx: Ctx,
  projectId: string,
  containerId: string,
  params: ListParams,
): Promise<ListPage<ContainerFileObject>> {
  await container(ctx, projectId, containerId);
  const page = await store.listFiles(ctx.store.db, containerId, params);
  return { ...page, data: page.data.map(containerFileObject) };
}

export async function getContainerFile(ctx: Ctx, projectId: string, containerId: string, fileId: string): Promise<ContainerFileObject> {
  return containerFileObject(await containerFile(ctx, projectId, containerId, fileId));
}

/** The bytes of a container file (`…/files/{id}/content`), read in parts. */
export async function openContainerFileContent(
  ctx: Ctx,
  projectId: string,
  containerId: string,
  fileId: string,
): Promise<{ file: ContainerFileObject; stream: Readable }> {
  const row = await containerFile(ctx, projectId, containerId, fileId);
  const db = ctx.store.db;
  const stream = Readable.from(
    (async function* () {
      for (let seq = 0; ; seq++) {
        const part = await db
          .selectFrom('container_file_parts')
          .select('data')
          .where('container_file_id', '=', fileId)
          .where('seq', '=', seq)
          .executeTakeFirst();
        if (!part) return;
        yield Buffer.from(part.data);
      }
    })(),
  );
  return { file: containerFileObject(row), stream };
}

export async function deleteContainerFile(
  ctx: Ctx,
  projectId: string,
  containerId: string,
  fileId: string,
): Promise<{ id: string; object: 'container.file.deleted'; deleted: true }> {
  await containerFile(ctx, projectId, containerId, fileId);
  const removed = await ctx.store.db.transaction().execute(async (tx) => {
    const done = await store.deleteFile(tx, fileId);
    if (done) await store.touchContainer(tx, containerId, ctx.clock.nowSeconds());
    return done;
  });
  if (!removed) throw notFound('container file', fileId, 'file_id');
  return { id: fileId, object: 'container.file.deleted', deleted: true };
}

// Execution

/** What one execution in a container did: the executor's result, and the container files it wrote or showed. */
export interface ContainerExecution {
  result: ExecuteResult;
  /** Files the code created or changed under /mnt/data, as container files now. */
  files: ContainerFileObject[];
  /** The figures it showed (plt.show), each kept as a container file too, in order. */
  images: { file: ContainerFileObject; bytes: Uint8Array }[];
  /** Files the container could not keep (past its bounds), for the logs. */
  notes: string[];
}

/**
 * Runs code in a running container's Python session (the code_interpreter executor, session = the
 * container's id): its files are placed under /mnt/data first (the executor skips those already there
 * unchanged), and the files the code writes, and the figures it shows, become container files of source
 * `assistant`. Errors of the code are its result, not a failure.
 */
export async function executeInContainer(ctx: Ctx, projectId: string, containerId: string, code: string): Promise<ContainerExecution> {
  await running(ctx, projectId, containerId);
  const db = ctx.store.db;
  const rows = (await store.allFiles(db, containerId)).filter((r) => validPath(r.path));
  const inputs: SandboxFile[] = [];
  for (const r of rows) inputs.push({ path: r.path, bytes: await store.readBytes(db, r.id) });
  const result = await ctx.services.codeInterpreter.execute({ session: containerId, code, files: inputs });
  const now = ctx.clock.nowSeconds();
  const byPath = new Map(rows.map((r) => [r.path, r]));
  const notes: string[] = [];
  const kept: { row: store.ContainerFileRow; data: Uint8Array }[] = [];
  let count = rows.length;
  let bytes = rows.reduce((n, r) => n + Number(r.bytes), 0);
  const keep = (path: string, data: Uint8Array, newFileId = () => newId('cfile', ctx.clock)) => {
    const there = byPath.get(path);
    const grows = data.length - Number(there?.bytes ?? 0);
    if (
      !validPath(path) ||
      data.length > MAX_CONTAINER_FILE_BYTES ||
      (!there && count + 1 > MAX_CONTAINER_FILES) ||
      bytes + grows > MAX_CONTAINER_BYTES
    ) {
      notes.push(`[Standin] ${path} was not kept as a container file: it passes the container's bounds.`);
      return undefined;
    }
    if (!there) count++;
    bytes += grows;
    const row: store.ContainerFileRow = there
      ? { ...there, bytes: data.length }
      : {
          id: newFileId(),
          container_id: containerId,
          project_id: projectId,
          path,
          bytes: data.length,
          source: 'assistant',
          created_at: now,
        };
    byPath.set(path, row);
    kept.push({ row, data });
    return row;
  };
  const files: ContainerFileObject[] = [];
  for (const f of result.files) {
    const row = keep(f.path, f.bytes);
    if (row) files.push(containerFileObject(row));
  }
  const images: ContainerExecution['images'] = [];
  for (const png of result.images) {
    // A shown figure has no path of its own: it gets one named after its file id, so it never replaces another.
    const id = newId('cfile', ctx.clock);
    const path = `${SANDBOX_ROOT}${id}.png`;
    const row = keep(path, png, () => id);
    if (!row) continue;
    images.push({ file: containerFileObject(row), bytes: png });
  }
  await db.transaction().execute(async (tx) => {
    // The container may have been deleted meanwhile: then nothing is kept.
    if (!(await store.getContainer(tx, projectId, containerId))) return;
    for (const k of kept) await store.putFile(tx, k.row, k.data);
    await store.touchContainer(tx, containerId, now);
  });
  return { result, files, images, notes };
}

/** The files of a container as a model is told of them (path and id), oldest first; none when it is gone. */
export async function containerFilePaths(ctx: Ctx, projectId: string, containerId: string): Promise<ContainerFileObject[]> {
  const c = CONTAINER_ID.test(containerId) ? await store.getContainer(ctx.store.db, projectId, containerId) : undefined;
  return c ? (await store.allFiles(ctx.store.db, containerId)).map(containerFileObject) : [];
}

/** The project of a container, by its id alone (the dashboard's search); undefined when none. */
export async function locateContainer(ctx: Ctx, id: string): Promise<{ project_id: string } | undefined> {
  return CONTAINER_ID.test(id) ? store.containerProject(ctx.store.db, id) : undefined;
}

/** The container and project of a container file, by its id alone (the dashboard's search). */
export async function locateContainerFile(ctx: Ctx, id: string): Promise<{ project_id: string; container_id: string } | undefined> {
  return CONTAINER_FILE_ID.test(id) ? store.fileContainer(ctx.store.db, id) : undefined;
}
