import { html } from 'htm/preact';
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export { html };

/** Unix seconds as a local date and time. */
export const time = (s: number | null | undefined) => (s ? new Date(s * 1000).toLocaleString(undefined, { hour12: false }) : '—');
/** Unix seconds as "12 s ago" / "in 3 min", against `now` (the Standin clock, in seconds). */
export function relative(s: number, now: number): string {
  const d = s - now;
  const a = Math.abs(d);
  const t =
    a < 60
      ? `${Math.round(a)} s`
      : a < 3600
        ? `${Math.round(a / 60)} min`
        : a < 86400
          ? `${Math.round(a / 3600)} h`
          : `${Math.round(a / 86400)} d`;
  return d >= 0 ? `in ${t}` : `${t} ago`;
}

/** Loads `load()` now, when `deps` change, and every `everyMs` while the tab is visible (live views). */
export function useData<T>(load: () => Promise<T>, deps: unknown[], everyMs = 0) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string>('');
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const d = await load();
      if (mine === seq.current) {
        setData(d);
        setError('');
      }
    } catch (e) {
      if (mine === seq.current) setError((e as Error).message);
    }
  }, deps);
  useEffect(() => {
    void reload();
    if (!everyMs) return;
    const t = setInterval(() => document.visibilityState === 'visible' && void reload(), everyMs);
    return () => clearInterval(t);
  }, [reload, everyMs]);
  return { data, error, reload, setData };
}

export const Status = ({ code }: { code: number | null | undefined }) =>
  code == null
    ? html`<span class="badge">—</span>`
    : html`<span class=${`badge s${String(code)[0]}${code === 429 ? ' s429' : ''}`}>${code}</span>`;

export const Badge = ({ tone, children }: { tone?: string; children: ComponentChildren }) =>
  html`<span class=${`badge ${tone ?? ''}`}>${children}</span>`;

export const ErrorLine = ({ error }: { error: string }) => (error ? html`<p class="error" role="alert">${error}</p>` : null);

export const Json = ({ value }: { value: unknown }) =>
  html`<pre class="json">
${value === null || value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</pre>`;

export const Empty = ({ children }: { children: ComponentChildren }) => html`<p class="empty">${children}</p>`;

/** A section of a page with a heading and optional actions on the right. */
export const Card = ({
  title,
  actions,
  children,
  id,
}: {
  title: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
  id?: string;
}) =>
  html`<section class="card" aria-labelledby=${id}>
    <header>
      <h2 id=${id}>${title}</h2>
      ${actions ? html`<div class="actions">${actions}</div>` : null}
    </header>
    ${children}
  </section>`;

/** Puts text on the clipboard; where the Clipboard API is missing (plain HTTP off loopback), through a selection. */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

/** A button that copies an id in one click. */
export function Copy({ id }: { id: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await copyText(id);
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return html`<button type="button" class="copy" onClick=${copy} aria-label=${`Copy ${id}`} title=${copied ? 'Copied' : `Copy ${id}`}>
    <svg viewBox="0 0 16 16" width="13" height="13" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="1.5">
      ${
        copied
          ? html`<polyline points="3,8.5 6.5,12 13,4.5" />`
          : html`<rect x="5.5" y="5.5" width="8" height="8" rx="1.5" /><path
                d="M10.5 3.5v-1a1 1 0 0 0-1-1h-7a1 1 0 0 0-1 1v7a1 1 0 0 0 1 1h1"
              />`
      }
    </svg>
  </button>`;
}

/** An id in code type with its copy button. */
export const Id = ({ id }: { id: string }) => html`<span class="id"><code>${id}</code><${Copy} id=${id} /></span>`;

/** Marks the element of `id` (its `data-id`) once it is shown, and scrolls it into view: where a search lands. */
export function useReveal(id: string | null | undefined, shown: unknown): void {
  useEffect(() => {
    if (!id) return;
    const el = document.querySelector(`[data-id="${CSS.escape(id)}"]`);
    el?.scrollIntoView({ block: 'center' });
  }, [id, shown]);
}

/** The theme in force (`light` or `dark`), following the header's choice and the system's. */
export function useDark(): boolean {
  const read = () =>
    document.documentElement.dataset.theme
      ? document.documentElement.dataset.theme === 'dark'
      : matchMedia('(prefers-color-scheme: dark)').matches;
  const [dark, setDark] = useState(read);
  useEffect(() => {
    const update = () => setDark(read());
    const media = matchMedia('(prefers-color-scheme: dark)');
    media.addEventListener('change', update);
    const observer = new MutationObserver(update);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    return () => (media.removeEventListener('change', update), observer.disconnect());
  }, []);
  return dark;
}

/** Runs an action, reporting its error in a shared message line. */
export function useAction(): [string, (fn: () => Promise<unknown>) => Promise<void>, (m: string) => void] {
  const [msg, setMsg] = useState('');
  const run = async (fn: () => Promise<unknown>) => {
    setMsg('');
    try {
      await fn();
    } catch (e) {
      setMsg((e as Error).message);
    }
  };
  return [msg, run, setMsg];
}
