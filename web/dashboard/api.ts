import type { ErrorBody } from '../../src/dashboard/wire.js';

// Every call goes to /admin/v1 with the session cookie and the session's binding (x-standin-dashboard); writes
// also carry the CSRF header the server requires.

/**
 * Where the page keeps the binding: this origin's storage, which no other port of the host reads (cookies go to
 * every port). localStorage rather than sessionStorage, so a link opened in a new tab is still signed in.
 */
const BINDING = 'standin.dashboard.binding';
// The sign-in link lands here with the binding in the fragment: kept, then taken out of the address bar.
const landed = /^#binding=([A-Za-z0-9_-]{20,100})$/.exec(location.hash);
if (landed) {
  localStorage.setItem(BINDING, landed[1]);
  history.replaceState(null, '', location.pathname + location.search);
}

/** Keeps the binding of a new session (signing in with the key), or forgets it (signing out). */
export function setBinding(binding: string | null | undefined): void {
  if (binding) localStorage.setItem(BINDING, binding);
  else localStorage.removeItem(BINDING);
}

function headersFor(method: string): Record<string, string> {
  // Sent signed out too ('none'): the header also keeps the dashboard's reads out of the request log.
  const headers: Record<string, string> = { 'x-standin-dashboard': localStorage.getItem(BINDING) ?? 'none' };
  if (method !== 'GET') headers['x-standin-csrf'] = '1';
  return headers;
}

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
  const headers = headersFor(method);
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

/** Downloads a file of the control plane as `name`: fetched with the session's headers (a plain link would carry the cookie alone). */
export async function download(path: string, name: string): Promise<void> {
  const res = await fetch(path, { headers: headersFor('GET'), credentials: 'same-origin' });
  if (res.status === 401) signedOut.forEach((l) => l());
  if (!res.ok) throw new ApiError(`${res.status} ${res.statusText}`, res.status);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** A query string from the set values of `params`. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}
