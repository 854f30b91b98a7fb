import type { ErrorBody } from '../../src/dashboard/wire.js';

// Every call goes to /admin/v1 with the session cookie; writes carry the CSRF header the server requires.
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

type Listener = () => void;
const signedOut: Listener[] = [];
/** Called when the server says the session is gone (401). */
export const onSignedOut = (l: Listener) => void signedOut.push(l);

/** Calls the control plane (`path` under /admin/v1, or an absolute path) and answers its JSON as `T` (a type of src/dashboard/wire.ts). */
export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  // The dashboard's reads stay out of the request log; its writes are logged like any other.
  const headers: Record<string, string> = method === 'GET' ? { 'x-standin-dashboard': '1' } : { 'x-standin-csrf': '1' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path.startsWith('/') ? path : `/admin/v1/${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json: unknown = await res.json().catch(() => ({}));
  if (res.status === 401 && !path.startsWith('/dashboard/')) signedOut.forEach((l) => l());
  if (!res.ok) throw new ApiError((json as Partial<ErrorBody>).error?.message ?? `${res.status} ${res.statusText}`, res.status);
  return json as T;
}

export const get = <T = unknown>(path: string) => api<T>('GET', path);

/** A query string from the set values of `params`. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}
