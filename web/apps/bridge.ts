// The component bridge, loaded first in every component document on the widget origin. It gives the component
// `window.<vendor>` (globals, methods, the `<vendor>:set_globals` event) and talks to the host page over a
// MessagePort, so it never mixes with the MCP Apps JSON-RPC a standard app sends on window.postMessage.

interface Init {
  vendor: string;
  widgetSessionId: string;
  globals: Record<string, unknown>;
  hostOrigin: string;
}

(() => {
  const el = document.getElementById('__standin_init');
  if (!el || '__standinBridge' in window) return;
  const init = JSON.parse(el.textContent || '{}') as Init;
  const vendor = init.vendor || 'vendor';
  const channel = new MessageChannel();
  const port = channel.port1;
  let seq = 0;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  const request = (method: string, params: unknown = {}, transfer: Transferable[] = []) =>
    new Promise<unknown>((resolve, reject) => {
      const id = ++seq;
      pending.set(id, { resolve, reject });
      port.postMessage({ jsonrpc: '2.0', id, method, params }, transfer);
    });
  const notify = (method: string, params: unknown = {}) => port.postMessage({ jsonrpc: '2.0', method, params });

  const globals: Record<string, unknown> = {
    toolInput: null,
    toolOutput: null,
    toolResponseMetadata: null,
    widgetState: null,
    theme: 'light',
    displayMode: 'inline',
    maxHeight: 480,
    safeArea: { insets: { top: 0, bottom: 0, left: 0, right: 0 } },
    view: { mode: 'inline', params: null },
    userAgent: { device: { type: 'desktop' }, capabilities: { hover: true, touch: false } },
    locale: 'en-US',
    ...init.globals,
  };

  const api: Record<string, unknown> = {
    callTool: (name: string, args: Record<string, unknown> = {}) => request('tools/call', { name, arguments: args ?? {} }),
    setWidgetState: (state: unknown) => {
      // Stored synchronously: the new value is readable at once; the host keeps it for re-renders.
      globals.widgetState = state;
      api.widgetState = state;
      notify('bridge/setWidgetState', { state });
      return Promise.resolve();
    },
    sendFollowUpMessage: (args: { prompt: string; scrollToBottom?: boolean }) =>
      request('bridge/sendFollowUpMessage', { prompt: args?.prompt, scrollToBottom: args?.scrollToBottom ?? true }),
    uploadFile: async (file: File, opts: { library?: boolean } = {}) => {
      if (!(file instanceof Blob)) throw new TypeError('uploadFile needs a File');
      const bytes = await file.arrayBuffer();
      return request(
        'bridge/uploadFile',
        { name: (file as File).name ?? 'file', type: file.type, library: opts?.library === true, bytes },
        [bytes],
      );
    },
    selectFiles: () => request('bridge/selectFiles'),
    getFileDownloadUrl: (args: { fileId: string }) => request('bridge/getFileDownloadUrl', { fileId: args?.fileId }),
    requestDisplayMode: (args: { mode: string }) => request('ui/request-display-mode', { mode: args?.mode }),
    requestModal: (args: { params?: unknown; template?: string } = {}) =>
      request('bridge/requestModal', { params: args?.params ?? null, template: args?.template ?? null }),
    requestClose: () => request('bridge/requestClose'),
    notifyIntrinsicHeight: (arg: number | { height: number }) => {
      const height = typeof arg === 'number' ? arg : arg?.height;
      notify('bridge/intrinsicHeight', { height });
      return Promise.resolve();
    },
    openExternal: (args: { href: string; redirectUrl?: boolean | string }) =>
      request('bridge/openExternal', { href: args?.href, redirectUrl: args?.redirectUrl }),
    setOpenInAppUrl: (args: { href: string }) => request('bridge/setOpenInAppUrl', { href: args?.href }),
  };
  Object.assign(api, globals);
  Object.defineProperty(window, vendor, { value: api, configurable: false, writable: false, enumerable: true });
  Object.assign(window, { __standinBridge: { widgetSessionId: init.widgetSessionId } });

  const applyGlobals = (changed: Record<string, unknown>) => {
    Object.assign(globals, changed);
    Object.assign(api, changed);
    window.dispatchEvent(new CustomEvent(`${vendor}:set_globals`, { detail: { globals: changed } }));
  };

  port.onmessage = (ev: MessageEvent) => {
    const m = ev.data as {
      jsonrpc?: string;
      id?: number;
      method?: string;
      params?: { globals?: Record<string, unknown>; action?: string };
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    } | null;
    if (!m || m.jsonrpc !== '2.0') return;
    if (m.id !== undefined && !m.method) {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error) p.reject(Object.assign(new Error(m.error.message), { code: m.error.code, data: m.error.data }));
      else p.resolve(m.result);
      return;
    }
    if (m.method === 'bridge/set_globals') applyGlobals(m.params?.globals ?? {});
    else if (m.method === 'bridge/navigate') {
      if (m.params?.action === 'back') history.back();
      else if (m.params?.action === 'forward') history.forward();
    }
  };
  port.start();

  // Routers expect to start at "/": the document is served at /w/<id>, so the bridge moves it to the root
  // before the component's scripts run. Navigation is then mirrored into the host page.
  try {
    history.replaceState(history.state, '', '/' + location.search.replace(/^\?$/, '') + location.hash);
  } catch {
    /* sandboxes without same-origin keep their URL */
  }
  // The Navigation API (Chromium), where there is one.
  const nav = (window as { navigation?: { canGoBack: boolean; canGoForward: boolean } }).navigation;
  const report = (kind: string) =>
    notify('bridge/navigation', {
      kind,
      path: location.pathname + location.search + location.hash,
      href: location.href,
      canGoBack: nav ? !!nav.canGoBack : history.length > 1,
      canGoForward: nav ? !!nav.canGoForward : false,
    });
  const wrap = (name: 'pushState' | 'replaceState') => {
    const orig = history[name].bind(history);
    history[name] = (state: unknown, title: string, url?: string | URL | null) => {
      orig(state, title, url);
      report(name === 'pushState' ? 'push' : 'replace');
    };
  };
  wrap('pushState');
  wrap('replaceState');
  addEventListener('popstate', () => report('pop'));
  addEventListener('hashchange', () => report('hash'));

  // Size: reported on every change so the host can fit the frame (notifyIntrinsicHeight overrides it).
  let lastHeight = -1;
  // The content's height, even where the page is pinned to its frame (`html, body { height: 100% }`): measured at
  // max-content, as the MCP Apps SDK measures what it reports, and put back before the browser paints.
  const measure = () => {
    const root = document.documentElement;
    const pinned = root.style.height;
    root.style.height = 'max-content';
    const h = Math.ceil(root.getBoundingClientRect().height);
    root.style.height = pinned;
    if (h !== lastHeight) {
      lastHeight = h;
      notify('bridge/size', { height: h });
    }
  };
  addEventListener('DOMContentLoaded', () => {
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(document.documentElement);
    if (document.body) observer.observe(document.body);
    report('load');
  });

  parent.postMessage({ standinBridge: 'hello', widgetSessionId: init.widgetSessionId }, '*', [channel.port2]);
})();
