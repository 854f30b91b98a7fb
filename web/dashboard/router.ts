import { useEffect, useState } from 'preact/hooks';

// Pages live under /dashboard/<page>; links are ordinary anchors, intercepted so the app does not reload.
export const BASE = '/dashboard';

const listeners = new Set<() => void>();
// Counts navigations, so a page opened again with another query (a search result) starts afresh.
let visits = 0;
export function navigate(to: string): void {
  history.pushState(null, '', to);
  visits++;
  listeners.forEach((l) => l());
}
window.addEventListener('popstate', () => (visits++, listeners.forEach((l) => l())));

/** The current location (path under /dashboard and the query), re-rendering on navigation. */
export function useLocation(): { page: string; rest: string[]; query: URLSearchParams; visit: number } {
  const [, set] = useState(0);
  useEffect(() => {
    const l = () => set((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  const parts = location.pathname.slice(BASE.length).split('/').filter(Boolean).map(decodeURIComponent);
  return { page: parts[0] ?? 'overview', rest: parts.slice(1), query: new URLSearchParams(location.search), visit: visits };
}

/** Sends same-origin clicks on /dashboard links through the router. */
export function interceptLinks(): void {
  document.addEventListener('click', (e) => {
    const a = (e.target as Element).closest?.('a');
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || a.target) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith(BASE) || url.pathname.startsWith(`${BASE}/sign-in`)) return;
    e.preventDefault();
    navigate(url.pathname + url.search);
  });
}

/** Replaces the query of the current page (filters), without a history entry per keystroke. */
export function setQuery(params: Record<string, string>): void {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) p.set(k, v);
  const s = p.toString();
  history.replaceState(null, '', location.pathname + (s ? `?${s}` : ''));
}
