// MCP Apps JSON-RPC (reference/mcp-apps-spec-2026-01-26.mdx) with a view over window.postMessage: every request
// is answered whether or not an approval is pending.
import { readResource } from './api.js';
import { callFromComponent, isWebUrl, openLink } from './calls.js';
import { maxHeightFor } from './display.js';
import { arr, obj, str, type JsonObject, type RpcMessage } from './json.js';
import { connection, now, timings } from './state.js';
import { PROTOCOL_VERSION, settings } from './settings.js';
import { addTranscript } from './transcript.js';
import type { Widget } from './widget.js';

function hostContext(w: Widget) {
  return {
    toolInfo: { tool: w.o.tool },
    theme: settings.theme,
    displayMode: w.displayMode,
    availableDisplayModes: w.modes,
    containerDimensions: { maxHeight: maxHeightFor(w.displayMode) },
    locale: settings.locale,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    userAgent: 'standin/0.1',
    platform: 'web',
    deviceCapabilities: { touch: false, hover: true },
    safeAreaInsets: { top: 0, right: 0, bottom: 0, left: 0 },
    styles: {
      variables: {
        '--color-background-primary': 'light-dark(#ffffff, #171717)',
        '--color-text-primary': 'light-dark(#171717, #fafafa)',
        '--color-border-primary': 'light-dark(#d4d4d4, #404040)',
        '--font-sans': 'system-ui, sans-serif',
        '--font-mono': 'ui-monospace, monospace',
        '--border-radius-md': '8px',
      },
    },
  };
}

function initialize(w: Widget, p: JsonObject) {
  const caps = obj(p.appCapabilities);
  w.appModes = Array.isArray(caps.availableDisplayModes) ? caps.availableDisplayModes.filter((x) => typeof x === 'string') : null;
  w.providesTools = typeof caps.tools === 'object' && caps.tools !== null;
  return {
    protocolVersion: str(p.protocolVersion) ?? PROTOCOL_VERSION,
    hostInfo: { name: 'standin', version: '0.1.0' },
    hostCapabilities: {
      openLinks: {},
      serverTools: {},
      serverResources: {},
      logging: {},
      updateModelContext: {},
      message: {},
      sandbox: w.sandboxInfo,
    },
    hostContext: hostContext(w),
  };
}

/** The view is initialized: what the host queued goes out, tool-input before tool-result as the spec requires. */
function initialized(w: Widget) {
  w.initialized = true;
  timings.initializedAt = now();
  const queued = w.pendingToMcp.splice(0).filter((q) => !w.sentDirect.has(q.method ?? ''));
  const sent = (method: string) => queued.some((q) => q.method === method) || w.sentDirect.has(method);
  if (!sent('ui/notifications/tool-input') && w.globals.toolInput !== null)
    w.postToFrame({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: w.globals.toolInput } });
  for (const q of queued) w.postToFrame(q);
  if (w.result && !sent('ui/notifications/tool-result'))
    w.postToFrame({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: w.withSession(w.result) });
  if (w.providesTools) void w.listAppTools();
}

/** ui/download-file: links open in a tab, embedded resources download as files. */
function download(p: JsonObject) {
  const names: string[] = [];
  for (const item of arr(p.contents)) {
    const c = obj(item);
    if (c.type === 'resource_link' && typeof c.uri === 'string' && /^https?:/.test(c.uri)) {
      window.open(c.uri, '_blank', 'noopener,noreferrer');
      names.push(c.uri);
    } else if (c.type === 'resource' && c.resource) {
      const r = obj(c.resource);
      const bytes =
        typeof r.blob === 'string'
          ? Uint8Array.from(atob(r.blob), (ch) => ch.charCodeAt(0))
          : new TextEncoder().encode(String(r.text ?? ''));
      const a = document.createElement('a');
      a.href = URL.createObjectURL(new Blob([bytes], { type: str(r.mimeType) ?? 'application/octet-stream' }));
      a.download =
        String(r.uri ?? 'download')
          .split('/')
          .pop() || 'download';
      a.click();
      names.push(String(r.uri));
    }
  }
  addTranscript('file', 'Download requested by the component', names);
}

/** Handles one request or notification of a view. */
export async function handleMcp(w: Widget, m: RpcMessage) {
  const reply = (result: unknown) => m.id !== undefined && w.postToFrame({ jsonrpc: '2.0', id: m.id, result });
  const fail = (code: number, message: string) =>
    m.id !== undefined && w.postToFrame({ jsonrpc: '2.0', id: m.id, error: { code, message } });
  const p = obj(m.params);
  try {
    switch (m.method) {
      case 'ui/initialize':
        return reply(initialize(w, p));
      case 'ui/notifications/initialized':
        return initialized(w);
      case 'notifications/tools/list_changed':
        if (w.providesTools) void w.listAppTools();
        return;
      case 'ui/notifications/size-changed':
        if (typeof p.height === 'number' && p.height >= 0) w.reportHeight(Math.ceil(p.height), true);
        return;
      case 'ui/message': {
        const text = Array.isArray(p.content) ? p.content.map((c) => str(obj(c).text) ?? '').join('\n') : (str(obj(p.content).text) ?? '');
        addTranscript('followup', `Message from the component (${str(p.role) ?? 'user'})`, text);
        return reply({});
      }
      case 'ui/open-link':
        if (!isWebUrl(p.url)) return fail(-32602, 'Invalid URL');
        openLink(w, p.url);
        return reply({});
      case 'ui/request-display-mode':
        return reply({ mode: w.componentMode(p.mode) });
      case 'ui/update-model-context':
        addTranscript('context', 'Model context from the component', { content: p.content, structuredContent: p.structuredContent });
        return reply({});
      case 'tools/call':
        return reply(await callFromComponent(w, String(p.name), obj(p.arguments)));
      case 'resources/read': {
        const conn = connection.get();
        if (!conn) return fail(-32000, 'not connected');
        return reply(await readResource({ connection: conn.id, uri: String(p.uri) }));
      }
      case 'ui/notifications/request-teardown':
        return void w.close('the component asked to close');
      case 'ui/download-file':
        download(p);
        return reply({});
      case 'notifications/message':
        addTranscript('log', `Log (${str(p.level) ?? 'info'}) from the component`, p.data);
        return;
      case 'ping':
        return reply({});
      default:
        if (m.method?.startsWith('ui/notifications/sandbox-')) return;
        return fail(-32601, `Method not found: ${m.method}`);
    }
  } catch (err) {
    fail(-32000, (err as Error).message);
  }
}
