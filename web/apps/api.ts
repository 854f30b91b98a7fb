// The host page's calls to the app host API (`/apps/api/…`), typed by the server's route schemas. Off loopback
// the API needs the admin key: the page asks for it once per tab (sessionStorage) and sends it with every call.
import type {
  CallBody,
  CallReply,
  ConnectBody,
  ConnectionReply,
  DownloadUrlReply,
  LibraryReply,
  PrefetchBody,
  PrefetchReply,
  RenderBody,
  RenderReply,
  ResourceBody,
  ResourceReply,
  UploadReply,
} from '../../src/apps/host/wire.js';
import { Cell } from './cell.js';
import { obj, str } from './json.js';

export const needsKey = document.body.dataset.needsKey === 'true';
export const KEY_ITEM = 'standin.adminKey';
/** Whether the admin key form shows (the API answered 401, or the page knows the API needs the key). */
export const signInShown = new Cell(false);

export function authHeaders(): Record<string, string> {
  const key = sessionStorage.getItem(KEY_ITEM);
  return key ? { 'x-admin-key': key } : {};
}

/** An API error: the message of the error envelope and the HTTP status. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function request<T>(path: string, body?: unknown): Promise<T> {
  const r = await fetch(
    path,
    body === undefined
      ? { headers: authHeaders() }
      : { method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders() }, body: JSON.stringify(body) },
  );
  const data: unknown = await r.json().catch(() => ({}));
  if (r.status === 401) signInShown.set(true);
  if (!r.ok) throw new ApiError(str(obj(obj(data).error).message) ?? `HTTP ${r.status}`, r.status);
  return data as T;
}

export const connectServer = (b: ConnectBody) => request<ConnectionReply>('/apps/api/connect', b);
export const callTool = (b: CallBody) => request<CallReply>('/apps/api/call', b);
export const renderTemplate = (b: RenderBody) => request<RenderReply>('/apps/api/render', b);
export const prefetch = (b: PrefetchBody) => request<PrefetchReply>('/apps/api/prefetch', b);
export const readResource = (b: ResourceBody) => request<ResourceReply>('/apps/api/resource', b);
export const listLibrary = () => request<LibraryReply>('/apps/api/files');
export const downloadUrl = (fileId: string) => request<DownloadUrlReply>(`/apps/api/files/${encodeURIComponent(fileId)}/url`, {});

/** Uploads bytes (a file input's file, or a component's upload) as they are. */
export async function uploadBlob(data: Blob | ArrayBuffer, name: string, library: boolean, type?: string): Promise<UploadReply> {
  const r = await fetch('/apps/api/files', {
    method: 'POST',
    headers: {
      'content-type': 'application/octet-stream',
      'x-file-name': encodeURIComponent(name),
      'x-file-type': type ?? (data instanceof Blob ? data.type : ''),
      'x-file-library': String(library),
      ...authHeaders(),
    },
    body: data,
  });
  if (r.status === 401) signInShown.set(true);
  const body: unknown = await r.json();
  if (!r.ok) throw new ApiError(str(obj(obj(body).error).message) ?? `upload failed (${r.status})`, r.status);
  return body as UploadReply;
}
