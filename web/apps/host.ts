// The app host page: connects to an MCP server (through Standin), lists tools with lint findings, calls them the
// way the model would, renders their components on the widget origin and speaks both the `window.<vendor>`
// bridge protocol (over a MessagePort) and MCP Apps JSON-RPC (over postMessage) with them.

import { NAV_PAGES, THEME_KEY } from '../dashboard/nav.js';
import { cspNeedsPane, cspProfileControl, currentCspProfile, recordCspViolation } from './csp-profile.js';
import { SandboxFrame } from './sandbox-frame.js';

type Json = any;
interface ToolEntry {
  descriptor: Json;
  visibility: { model: boolean; app: boolean };
  templateUri: string | null;
}
interface Finding {
  severity: 'error' | 'warning';
  rule: string;
  path: string;
  message: string;
}
interface Connection {
  id: string;
  server: string;
  serverInfo: Json;
  tools: ToolEntry[];
  findings: Finding[];
}
type DisplayMode = 'inline' | 'pip' | 'fullscreen';

const vendor = document.body.dataset.vendor || 'vendor';
const V = (k: string) => `${vendor}/${k}`;
const PROTOCOL_VERSION = '2026-01-26';
const MODES: DisplayMode[] = ['inline', 'pip', 'fullscreen'];
/**
 * The tallest an inline frame is shown. The frame follows the height its component reports (MCP Apps
 * size-changed, or notifyIntrinsicHeight) up to this, and scrolls beyond it, so nothing is cut off.
 */
const inlineCap = () => Math.max(600, innerHeight - 120);
/** A bound on a frame's height, so a component whose content grows with its frame cannot grow it forever. */
const MAX_FRAME_HEIGHT = 10_000;

// ------------------------------------------------------------------------------------------------ helpers

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, any> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'className') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}
const pretty = (v: unknown) => JSON.stringify(v, null, 2);
const rid = (prefix: string) =>
  `${prefix}_${Array.from(crypto.getRandomValues(new Uint8Array(9)), (b) => b.toString(16).padStart(2, '0')).join('')}`;

// Off loopback the host API needs the admin key: the page asks for it once per tab (sessionStorage) and sends it
// with every API request.
const needsKey = document.body.dataset.needsKey === 'true';
const KEY_ITEM = 'standin.adminKey';
function authHeaders(): Record<string, string> {
  const key = sessionStorage.getItem(KEY_ITEM);
  return key ? { 'x-admin-key': key } : {};
}

async function api<T = Json>(path: string, body?: unknown): Promise<T> {
  const r = await fetch(
    path,
    body === undefined
      ? { headers: authHeaders() }
      : { method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders() }, body: JSON.stringify(body) },
  );
  const data = await r.json().catch(() => ({}));
  if (r.status === 401) askForKey();
  if (!r.ok) throw Object.assign(new Error(data?.error?.message ?? `HTTP ${r.status}`), { status: r.status, body: data });
  return data as T;
}

// ------------------------------------------------------------------------------------------------ state

const settings = {
  // The theme chosen in the dashboard, else the system's: the two pages look alike.
  theme: (localStorage.getItem(THEME_KEY) === 'dark' || localStorage.getItem(THEME_KEY) === 'light'
    ? localStorage.getItem(THEME_KEY)
    : matchMedia('(prefers-color-scheme: dark)').matches
      ? 'dark'
      : 'light') as 'light' | 'dark',
  locale: navigator.language || 'en-US',
  userAgent: navigator.userAgent,
  userLocation: {
    city: '',
    region: '',
    country: '',
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    latitude: null as number | null,
    longitude: null as number | null,
  },
  subject: localStorage.getItem('standin.subject') || rid('v1'),
  session: rid('conv'),
  organization: '',
};
localStorage.setItem('standin.subject', settings.subject);

let conn: Connection | null = null;
const widgetStates = new Map<string, unknown>();
const instances = new Set<Widget>();
const timings: Record<string, number> = {};
/** Answers to ui/resource-teardown, for inspection (the frame is gone afterwards). */
const teardowns: { widgetSessionId: string; reason: string; response: Json }[] = [];
(window as any).__standinHost = {
  timings,
  instances,
  settings,
  teardowns,
  get connection() {
    return conn;
  },
};

/** The client metadata of the spec, sent on every tool call. */
function clientMeta(): Record<string, unknown> {
  const loc = Object.fromEntries(Object.entries(settings.userLocation).filter(([, v]) => v !== '' && v !== null));
  const meta: Record<string, unknown> = {
    [V('locale')]: settings.locale,
    [V('userAgent')]: settings.userAgent,
    [V('userLocation')]: loc,
    [V('subject')]: settings.subject,
    [V('session')]: settings.session,
  };
  if (settings.organization) meta[V('organization')] = settings.organization;
  return meta;
}

// ------------------------------------------------------------------------------------------------ layout

const root = document.getElementById('app')!;
root.removeAttribute('aria-busy');
root.textContent = '';
const serverInput = h('input', {
  id: 'server',
  type: 'text',
  placeholder: 'http://localhost:3000/mcp or a command given to standin apps open',
  'aria-label': 'MCP server',
  size: 50,
});
const connectBtn = h('button', { id: 'connect', type: 'submit' }, 'Connect');
const themeSelect = h(
  'select',
  { id: 'theme', 'aria-label': 'Theme' },
  h('option', { value: 'light' }, 'light'),
  h('option', { value: 'dark' }, 'dark'),
);
themeSelect.value = settings.theme;
const localeInput = h('input', { id: 'locale', type: 'text', value: settings.locale, size: 8, 'aria-label': 'Locale' });
const metaDetails = h(
  'details',
  { id: 'client-meta' },
  h('summary', {}, 'Client metadata'),
  field(
    'userAgent',
    'User agent',
    () => settings.userAgent,
    (v) => (settings.userAgent = v),
  ),
  field(
    'userLocation',
    'User location (JSON)',
    () => JSON.stringify(settings.userLocation),
    (v) => (settings.userLocation = JSON.parse(v)),
  ),
  field(
    'subject',
    'Subject',
    () => settings.subject,
    (v) => (settings.subject = v),
  ),
  field(
    'session',
    'Session',
    () => settings.session,
    (v) => (settings.session = v),
  ),
  field(
    'organization',
    'Organization',
    () => settings.organization,
    (v) => (settings.organization = v),
  ),
);
function field(name: string, label: string, get: () => string, set: (v: string) => void) {
  const input = h('input', { name, value: get(), size: 40 });
  input.addEventListener('change', () => {
    try {
      set(input.value);
      input.removeAttribute('aria-invalid');
    } catch {
      input.setAttribute('aria-invalid', 'true');
    }
  });
  return h('label', {}, label, ' ', input);
}
const keyInput = h('input', { id: 'admin-key', type: 'password', autocomplete: 'off', size: 24, 'aria-label': 'Admin key' });
const signIn = h(
  'form',
  { id: 'sign-in', hidden: true, onsubmit: (e: Event) => (e.preventDefault(), void useKey()) },
  h('label', {}, 'Admin key ', keyInput),
  h('button', { type: 'submit' }, 'Sign in'),
  h('small', { className: 'muted' }, ' Standin does not listen on loopback: the host needs its admin key (kept in this tab only).'),
);
const statusLine = h('p', { id: 'status', role: 'status' });
const toolsPane = h(
  'aside',
  { id: 'tools', 'aria-label': 'Tools' },
  h('p', { className: 'muted' }, 'Connect to a server to list its tools.'),
);
const conversation = h('section', { id: 'conversation', 'aria-label': 'Conversation' });
const transcriptList = h('ol', { id: 'transcript-entries' });
const appToolsList = h('div', { className: 'app-tools-list' });
const appToolsPane = h(
  'section',
  { id: 'app-tools', 'aria-label': 'Tools of the components', hidden: true },
  h('h2', {}, 'Tools of the components'),
  h('p', { className: 'muted' }, 'Tools a mounted component provides (MCP Apps app-provided tools): the model may call them.'),
  appToolsList,
);
const transcript = h(
  'aside',
  { id: 'transcript', 'aria-label': 'Transcript' },
  appToolsPane,
  cspNeedsPane,
  h('h2', {}, 'Transcript'),
  h(
    'p',
    { className: 'muted' },
    'What the model sees: tool calls, structuredContent and content (never _meta), widget descriptions, follow-ups, widget state.',
  ),
  transcriptList,
);
const modalRoot = h('div', { id: 'modal-root' });
/** Approval prompts float here, above every frame and modal, while something covers the page. */
const approvalDock = h('div', { id: 'approval-dock', role: 'region', 'aria-label': 'Approvals' });

/** The dashboard's header: its brand and pages, the host marked as the current one. */
const topBar = h(
  'div',
  { className: 'top' },
  h('a', { className: 'brand', href: '/dashboard' }, 'Standin'),
  h(
    'nav',
    { 'aria-label': 'Pages' },
    h(
      'ul',
      {},
      ...NAV_PAGES.map((p) => h('li', {}, h('a', { href: `/dashboard/${p.id}` }, p.title))),
      h('li', {}, h('a', { href: '/apps', 'aria-current': 'page' }, 'App host')),
    ),
  ),
);

root.append(
  topBar,
  h(
    'header',
    {},
    h(
      'form',
      { id: 'connect-form', onsubmit: (e: Event) => (e.preventDefault(), void connect(serverInput.value)) },
      h('strong', {}, 'Standin app host'),
      serverInput,
      connectBtn,
    ),
    h('label', {}, 'Theme ', themeSelect),
    cspProfileControl(),
    h('label', {}, 'Locale ', localeInput),
    metaDetails,
    signIn,
  ),
  statusLine,
  h('main', {}, toolsPane, conversation, transcript),
  modalRoot,
  approvalDock,
);
document.documentElement.dataset.theme = settings.theme;
themeSelect.addEventListener('change', () => {
  settings.theme = themeSelect.value as 'light' | 'dark';
  document.documentElement.dataset.theme = settings.theme;
  for (const w of instances) w.contextChanged({ theme: settings.theme });
});
localeInput.addEventListener('change', () => {
  settings.locale = localeInput.value || 'en-US';
  for (const w of instances) w.contextChanged({ locale: settings.locale });
});

/** Shows the admin key field (the API answered 401, or the page knows the API needs the key). */
function askForKey() {
  signIn.hidden = false;
  if (!sessionStorage.getItem(KEY_ITEM)) keyInput.focus();
}

/** Set while the page start waits for the key (a deep link runs once it is given). */
let onKey: (() => void) | null = null;

async function useKey() {
  const key = keyInput.value.trim();
  if (!key) return setStatus('Enter the admin key of this Standin.', 'error');
  sessionStorage.setItem(KEY_ITEM, key);
  keyInput.value = '';
  signIn.hidden = true;
  setStatus('Signed in for this tab.');
  if (onKey) {
    const go = onKey;
    onKey = null;
    return go();
  }
  if (serverInput.value.trim()) await connect(serverInput.value);
}

function setStatus(text: string, kind: 'info' | 'error' = 'info') {
  statusLine.textContent = text;
  statusLine.dataset.kind = kind;
}

/** Adds a transcript entry: the model sees tool calls, structuredContent and content, follow-ups, widget descriptions. */
function addTranscript(kind: string, title: string, body?: unknown) {
  // Links opened, files moved and logs are host events: shown for debugging, marked as not seen by the model.
  const hostOnly = ['link', 'file', 'log'].includes(kind);
  const li = h(
    'li',
    { dataset: { kind, model: String(!hostOnly) }, className: hostOnly ? 'host-only' : '' },
    hostOnly ? h('small', {}, '[host only] ') : null,
    h('strong', {}, title),
  );
  if (body !== undefined) li.append(h('pre', {}, typeof body === 'string' ? body : pretty(body)));
  transcriptList.append(li);
  li.scrollIntoView({ block: 'nearest' });
}

// ------------------------------------------------------------------------------------------------ connect & tools

/** The HTTP status of the last failed connect (401: the admin key is missing or wrong). */
let lastConnectStatus = 0;

async function connect(server: string): Promise<boolean> {
  server = server.trim();
  if (!server) return (setStatus('Enter the URL of an MCP server (or a command started with standin apps open).', 'error'), false);
  setStatus(`Connecting to ${server}…`);
  connectBtn.disabled = true;
  try {
    conn = await api<Connection>('/apps/api/connect', { server, locale: settings.locale, refresh: true });
    serverInput.value = server;
    const errors = conn.findings.filter((f) => f.severity === 'error').length;
    setStatus(
      `Connected to ${conn.serverInfo?.name ?? server}: ${conn.tools.length} tool(s), ${errors} lint error(s), ${conn.findings.length - errors} warning(s).`,
    );
    renderTools();
    return true;
  } catch (err) {
    lastConnectStatus = (err as { status?: number }).status ?? 0;
    setStatus((err as Error).message, 'error');
    return false;
  } finally {
    connectBtn.disabled = false;
  }
}

function findingsFor(index: number): Finding[] {
  if (!conn) return [];
  const uri = conn.tools[index].templateUri;
  return conn.findings.filter(
    (f) => f.path.startsWith(`$.tools[${index}]`) || (uri && f.path.startsWith(`$.resources[${JSON.stringify(uri)}]`)),
  );
}

function renderTools() {
  toolsPane.textContent = '';
  if (!conn) return;
  toolsPane.append(h('h2', {}, 'Tools'));
  const general = conn.findings.filter((f) => !/^\$\.(tools|resources)\[/.test(f.path));
  if (general.length) toolsPane.append(findingList(general));
  conn.tools.forEach((t, i) => {
    const d = t.descriptor;
    const a = d.annotations ?? {};
    const fs = findingsFor(i);
    const errors = fs.filter((f) => f.severity === 'error').length;
    const badges = [
      a.readOnlyHint === true && 'read-only',
      a.destructiveHint === true && 'destructive',
      a.openWorldHint === true && 'open-world',
      t.templateUri && 'UI',
      !t.visibility.model && 'app only',
      !t.visibility.app && 'model only',
    ].filter(Boolean) as string[];
    const item = h(
      'details',
      { className: 'tool', dataset: { tool: d.name } },
      h(
        'summary',
        {},
        h('code', {}, d.name),
        ' ',
        ...badges.map((b) => h('span', { className: 'badge' }, b)),
        fs.length ? h('span', { className: errors ? 'badge error' : 'badge warning' }, `${fs.length} finding(s)`) : null,
      ),
      d.description ? h('p', {}, d.description) : null,
      toolForm(t),
      fs.length ? findingList(fs) : null,
      h('details', {}, h('summary', {}, 'Descriptor'), h('pre', {}, pretty(d))),
    );
    toolsPane.append(item);
  });
}

function findingList(fs: Finding[]) {
  return h(
    'ul',
    { className: 'findings' },
    ...fs.map((f) =>
      h(
        'li',
        { className: f.severity, dataset: { rule: f.rule } },
        h('b', {}, f.severity),
        ' ',
        h('code', {}, f.path),
        ' ',
        f.message,
        ' ',
        h('small', {}, `[${f.rule}]`),
      ),
    ),
  );
}

/** A starting value for the arguments form: defaults, else examples, else empty values of required fields. */
function exampleArgs(schema: Json): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const props = schema?.properties ?? {};
  for (const [k, p] of Object.entries<any>(props)) {
    if (p?.default !== undefined) out[k] = p.default;
    else if (Array.isArray(p?.examples) && p.examples.length) out[k] = p.examples[0];
    else if ((schema.required ?? []).includes(k))
      out[k] =
        p?.type === 'number' || p?.type === 'integer'
          ? 0
          : p?.type === 'boolean'
            ? false
            : p?.type === 'array'
              ? []
              : p?.type === 'object'
                ? {}
                : '';
  }
  return out;
}

function toolForm(t: ToolEntry) {
  const d = t.descriptor;
  const fileParams: string[] = Array.isArray(d._meta?.[V('fileParams')]) ? d._meta[V('fileParams')] : [];
  const args = h('textarea', { name: 'arguments', rows: 5, cols: 40, 'aria-label': `Arguments of ${d.name}` });
  args.value = pretty(Object.fromEntries(Object.entries(exampleArgs(d.inputSchema)).filter(([k]) => !fileParams.includes(k))));
  const fileInputs = fileParams.map((p) =>
    h('input', { type: 'file', name: p, multiple: d.inputSchema?.properties?.[p]?.type === 'array', 'aria-label': `File for ${p}` }),
  );
  const form = h(
    'form',
    { className: 'call-form' },
    h('label', {}, 'Arguments (JSON)', args),
    ...fileInputs.map((input) => h('label', {}, `File input ${input.name} `, input)),
    h(
      'button',
      { type: 'submit', disabled: !t.visibility.model, title: t.visibility.model ? '' : 'hidden from the model (visibility)' },
      `Call ${d.name}`,
    ),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(args.value || '{}');
    } catch (err) {
      return setStatus(`The arguments are not JSON: ${(err as Error).message}`, 'error');
    }
    for (const input of fileInputs) {
      const files = [...(input.files ?? [])];
      if (!files.length) continue;
      const objs = [];
      for (const f of files) {
        const up = await uploadBlob(f, f.name, true);
        objs.push({ file_id: up.fileId });
      }
      parsed[input.name] = input.multiple ? objs : objs[0];
    }
    await callAsModel(d.name, parsed);
  });
  return form;
}

async function uploadBlob(data: Blob | ArrayBuffer, name: string, library: boolean, type?: string) {
  const r = await fetch('/apps/api/files', {
    method: 'POST',
    headers: {
      'content-type': 'application/octet-stream',
      'x-file-name': encodeURIComponent(name),
      'x-file-type': type ?? (data instanceof Blob ? data.type : '') ?? '',
      'x-file-library': String(library),
      ...authHeaders(),
    },
    body: data,
  });
  if (r.status === 401) askForKey();
  const body = await r.json();
  if (!r.ok) throw new Error(body?.error?.message ?? `upload failed (${r.status})`);
  return body as { fileId: string; fileName: string; mimeType: string };
}

// ------------------------------------------------------------------------------------------------ calls

/** Calls a tool the way the model would: transcript, approval for destructive tools, then the component. */
async function callAsModel(name: string, args: Record<string, unknown>) {
  if (!conn) return setStatus('Connect to a server first.', 'error');
  const entry = conn.tools.find((t) => t.descriptor.name === name);
  if (!entry) return setStatus(`The server has no tool '${name}'.`, 'error');
  const d = entry.descriptor;
  const url = new URL(location.href);
  url.search = new URLSearchParams({ server: conn.server, tool: name, args: JSON.stringify(args) }).toString();
  history.replaceState(null, '', url);
  const turn = new Turn(entry);
  addTranscript('call', `Tool call: ${name}`, args);
  const gated = d.annotations?.destructiveHint === true;
  let widget: Widget | null = null;
  if (gated) {
    // The prompt exists before the component loads, so nothing the component asks for can come first.
    const approval = turn.askApproval(`'${name}' may delete or overwrite data. The host asks before calling it.`, args);
    if (entry.templateUri) widget = await turn.mount({ toolInput: null });
    const ok = await approval;
    if (!ok) {
      turn.setStatus('Denied: the tool was not called.');
      widget?.cancelled('the user denied the call');
      addTranscript('cancel', `Denied: ${name}`);
      return;
    }
    widget?.deliverInput(args);
  }
  turn.setStatus(d._meta?.[V('toolInvocation/invoking')] ?? `Calling ${name}…`);
  // The template is read while the tool runs (MCP Apps lets hosts prefetch), off the result → render path.
  let warm: HTMLIFrameElement | null = null;
  if (entry.templateUri && !widget) {
    void api('/apps/api/prefetch', { connection: conn.id, tool: name }).then(
      (p) => {
        // A hidden frame on the component's origin: the browser starts its renderer process while the tool runs.
        warm = h('iframe', { src: `${p.origin}/_standin/warm`, hidden: true, 'aria-hidden': 'true', tabindex: '-1' });
        document.body.append(warm);
      },
      () => undefined,
    );
  }
  let result: Json;
  try {
    result = (
      await api<{ result: Json }>('/apps/api/call', { connection: conn.id, name, arguments: args, _meta: clientMeta(), caller: 'model' })
    ).result;
  } catch (err) {
    turn.setStatus(`Failed: ${(err as Error).message}`, 'error');
    widget?.cancelled((err as Error).message);
    (warm as HTMLIFrameElement | null)?.remove();
    return;
  }
  timings.resultAt = performance.timeOrigin + performance.now();
  turn.setStatus(d._meta?.[V('toolInvocation/invoked')] ?? `Called ${name}.`);
  addTranscript('result', `Result of ${name}`, modelView(result));
  turn.showChallenge(result);
  if (!entry.templateUri) return turn.showPlain(result);

  if (widget) widget.deliverResult(result);
  else await turn.mount({ toolInput: args, result });
  (warm as HTMLIFrameElement | null)?.remove();
}

/** What the model sees of a result: structuredContent and content, never _meta. */
function modelView(result: Json) {
  const out: Json = {};
  if (result?.structuredContent !== undefined) out.structuredContent = result.structuredContent;
  if (result?.content !== undefined) out.content = result.content;
  if (result?.isError) out.isError = true;
  return out;
}

// ------------------------------------------------------------------------------------------------ approvals

/** Pending approval prompts and their turns. */
const approvals = new Map<HTMLElement, Turn>();
let idleWaiters: (() => void)[] = [];

/**
 * Resolves once no approval is pending. A component's requests that change what covers the page (display
 * mode, modal) wait for it: a fullscreen frame or a modal must not hide the prompt it is waiting on.
 */
function approvalsIdle(): Promise<void> {
  return approvals.size === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
}

function approvalSettled() {
  syncApprovals();
  if (approvals.size) return;
  const waiting = idleWaiters;
  idleWaiters = [];
  for (const wake of waiting) wake();
}

/**
 * Keeps every pending prompt visible and usable: in its turn while nothing covers the page, in the dock above
 * every frame and modal while a frame is fullscreen or picture-in-picture or a modal is open (the user may
 * switch a frame's mode; a frame already fullscreen may ask for a destructive call).
 */
function syncApprovals() {
  const covered = document.querySelector('.frame-box.mode-fullscreen, .frame-box.mode-pip, #modal-root > .modal') !== null;
  for (const [bar, turn] of approvals) {
    if (!covered) turn.homeOf(bar);
    else if (bar.parentElement !== approvalDock) approvalDock.append(bar);
  }
}
// Frames change mode and modals open and close in many places: follow the page instead of each of them.
new MutationObserver(() => syncApprovals()).observe(document.body, {
  subtree: true,
  childList: true,
  attributes: true,
  attributeFilter: ['class'],
});

class Turn {
  readonly key = rid('turn');
  readonly el: HTMLElement;
  private status = h('p', { className: 'turn-status', role: 'status' });
  private body = h('div', { className: 'turn-body' });
  widget: Widget | null = null;
  lastInit: { toolInput: unknown; result?: Json } = { toolInput: null };

  constructor(readonly entry: ToolEntry) {
    this.el = h(
      'article',
      { className: 'turn', dataset: { tool: entry.descriptor.name, turn: this.key } },
      h('h3', {}, entry.descriptor.title ?? entry.descriptor.name),
      this.status,
      this.body,
    );
    conversation.append(this.el);
  }

  setStatus(text: string, kind: 'info' | 'error' = 'info') {
    this.status.textContent = text;
    this.status.dataset.kind = kind;
  }

  /** Asks the user; the prompt stays above every frame and modal until answered (see syncApprovals). */
  askApproval(text: string, args: unknown): Promise<boolean> {
    return new Promise((resolve) => {
      const bar = h(
        'div',
        { className: 'approval', role: 'alertdialog', 'aria-label': 'Approval', dataset: { turn: this.key } },
        h('p', {}, h('strong', {}, `${this.entry.descriptor.title ?? this.entry.descriptor.name}: `), text),
        h('pre', {}, pretty(args)),
      );
      const done = (ok: boolean) => {
        bar.remove();
        approvals.delete(bar);
        resolve(ok);
        approvalSettled();
      };
      bar.append(
        h('button', { type: 'button', className: 'approve', onclick: () => done(true) }, 'Approve'),
        ' ',
        h('button', { type: 'button', onclick: () => done(false) }, 'Deny'),
      );
      approvals.set(bar, this);
      this.el.insertBefore(bar, this.body);
      syncApprovals();
    });
  }

  /** Where this turn's prompts sit while nothing covers them. */
  homeOf(bar: HTMLElement) {
    if (bar.parentElement !== this.el) this.el.insertBefore(bar, this.body);
  }

  showChallenge(result: Json) {
    const c = result?._meta?.['mcp/www_authenticate'];
    if (!c) return;
    const list = Array.isArray(c) ? c : [c];
    this.el.insertBefore(
      h(
        'div',
        { className: 'challenge', role: 'alert' },
        h('strong', {}, 'Sign-in required'),
        h('p', {}, 'The tool asks for OAuth (WWW-Authenticate):'),
        ...list.map((x: string) => h('pre', {}, String(x))),
      ),
      this.body,
    );
  }

  showPlain(result: Json) {
    this.body.append(h('pre', { className: 'plain-result' }, pretty(modelView(result))));
  }

  async mount(init: { toolInput: unknown; result?: Json }): Promise<Widget | null> {
    this.lastInit = init;
    this.body.textContent = '';
    const w = new Widget({
      turn: this,
      entry: this.entry,
      uri: null,
      view: { mode: 'inline', params: null },
      toolInput: init.toolInput,
      result: init.result,
      container: this.body,
    });
    this.widget = w;
    try {
      await w.mount();
    } catch (err) {
      this.setStatus(`Could not render the component: ${(err as Error).message}`, 'error');
      return null;
    }
    const controls = h(
      'div',
      { className: 'turn-controls' },
      ...MODES.map((m) => h('button', { type: 'button', dataset: { mode: m }, onclick: () => this.widget?.setDisplayMode(m, 'host') }, m)),
      h('button', { type: 'button', className: 'rerender', onclick: () => void this.rerender() }, 'Re-render'),
    );
    this.body.prepend(controls);
    return w;
  }

  async rerender() {
    const w = this.widget;
    const init = { toolInput: w ? w.globals.toolInput : this.lastInit.toolInput, result: w?.result ?? this.lastInit.result };
    if (w) await w.teardown('re-render');
    await this.mount(init);
  }
}

// ------------------------------------------------------------------------------------------------ widgets

interface WidgetOptions {
  turn: Turn;
  entry: ToolEntry;
  /** Another template of the same server (requestModal), or null for the tool's template. */
  uri: string | null;
  view: { mode: 'inline' | 'modal'; params: unknown };
  toolInput: unknown;
  result?: Json;
  container: HTMLElement;
  onClose?: () => void;
}

class Widget {
  readonly sessionId = rid('ws');
  iframe!: HTMLIFrameElement;
  /** The component's frame inside the MCP Apps sandbox proxy; its window's messages are the component's. */
  private sandbox: SandboxFrame | null = null;
  origin = '';
  frameBox = h('div', { className: 'frame-box' });
  /** Holds the iframe: inline, at most inlineCap() tall, scrolling when the component reports more. */
  private frameScroll = h('div', { className: 'frame-scroll' });
  private chrome = h('div', { className: 'frame-chrome' });
  private navPath = h('code', { className: 'nav-path' }, '/');
  private backBtn = h('button', { type: 'button', className: 'nav-back', disabled: true }, '← Back');
  private port: MessagePort | null = null;
  private initialized = false;
  private pendingToMcp: Json[] = [];
  private seq = 0;
  private waiting = new Map<string, (m: Json) => void>();
  private appModes: string[] | null = null;
  /** The view declared `appCapabilities.tools`: it provides tools the host lists and may call. */
  private providesTools = false;
  /** The tools the view provides (its `tools/list`). */
  appTools: Json[] = [];
  private openInAppUrl: string | null = null;
  private currentHref = '';
  private redirectDomains: string[] = [];
  private sandboxInfo: Json = {};
  /** A `text/html+skybridge` document: its component may never send ui/initialize, so notifications go straight to it. */
  private skybridge = false;
  private sentDirect = new Set<string>();
  /** The height the component asked for (MCP Apps size-changed, notifyIntrinsicHeight). */
  private explicitHeight: number | null = null;
  /** The height the bridge measured (used while the component asks for none). */
  private measuredHeight: number | null = null;
  result: Json | undefined;
  displayMode: DisplayMode = 'inline';
  globals: Record<string, unknown>;
  log: Json[] = [];
  private onWindowMessage = (ev: MessageEvent) => this.handleWindowMessage(ev);

  constructor(readonly o: WidgetOptions) {
    this.result = o.result;
    this.globals = {
      toolInput: o.toolInput,
      toolOutput: o.result ? (o.result.structuredContent ?? null) : null,
      toolResponseMetadata: o.result ? this.responseMetadata(o.result) : null,
      widgetState: o.view.mode === 'modal' ? null : (widgetStates.get(o.turn.key) ?? null),
      theme: settings.theme,
      displayMode: 'inline',
      maxHeight: this.maxHeight('inline'),
      safeArea: { insets: { top: 0, bottom: 0, left: 0, right: 0 } },
      view: o.view,
      userAgent: { device: { type: 'desktop' }, capabilities: { hover: true, touch: false } },
      locale: settings.locale,
    };
  }

  private maxHeight(mode: DisplayMode) {
    return mode === 'fullscreen' ? Math.max(200, innerHeight - 48) : mode === 'pip' ? 400 : inlineCap();
  }

  /** The window changed size: the inline cap (maxHeight, containerDimensions) with it. */
  resized() {
    this.fit();
    const maxHeight = this.maxHeight(this.displayMode);
    if (maxHeight !== this.globals.maxHeight) this.contextChanged({ maxHeight });
  }

  private responseMetadata(result: Json) {
    return {
      ...(result._meta ?? {}),
      [V('widgetSessionId')]: this.sessionId,
      status: result.isError ? 'error' : 'success',
      call_tool_result: modelView(result),
      mcp_tool_result: this.withSession(result),
    };
  }

  private withSession(result: Json) {
    return { ...result, _meta: { ...(result._meta ?? {}), [V('widgetSessionId')]: this.sessionId } };
  }

  async mount() {
    const r = await api('/apps/api/render', {
      connection: conn!.id,
      ...(this.o.uri ? { uri: this.o.uri } : { tool: this.o.entry.descriptor.name }),
      globals: this.globals,
      widgetSessionId: this.sessionId,
      cspProfile: currentCspProfile(),
    });
    timings.renderApiAt = performance.timeOrigin + performance.now();
    this.origin = r.origin;
    this.redirectDomains = r.csp.redirectDomains ?? [];
    this.skybridge = r.mimeType === 'text/html+skybridge';
    this.sandboxInfo = {
      permissions: r.permissions,
      csp: {
        connectDomains: r.csp.connectDomains,
        resourceDomains: r.csp.resourceDomains,
        frameDomains: r.csp.frameDomains,
        baseUriDomains: r.csp.baseUriDomains,
      },
    };
    this.sandbox = new SandboxFrame({
      proxyUrl: r.sandboxUrl,
      origin: r.origin,
      resource: { html: r.html, ...this.sandboxInfo },
      title: `Component of ${this.o.entry.descriptor.name}`,
      allow: r.allow,
      dataset: { widgetSession: this.sessionId, origin: r.origin, cspProfile: r.cspProfile },
      onViolation: (v) => recordCspViolation(this.o.entry.descriptor.name, r.uri, v),
    });
    this.iframe = this.sandbox.iframe;
    this.backBtn.addEventListener('click', () => this.notifyBridge('bridge/navigate', { action: 'back' }));
    const openInApp = h('a', { className: 'open-in-app', target: '_blank', rel: 'noopener' }, 'Open in app');
    openInApp.addEventListener('click', () => (openInApp.href = this.openInAppUrl ?? this.currentHref));
    const exit = h('button', { type: 'button', className: 'exit-mode', onclick: () => this.setDisplayMode('inline', 'host') }, 'Exit');
    this.chrome.append(h('span', { className: 'nav' }, this.backBtn, ' ', this.navPath), openInApp, exit);
    this.frameBox.className = `frame-box mode-inline${r.prefersBorder === false ? ' borderless' : ' bordered'}`;
    this.frameScroll.append(this.iframe);
    this.frameBox.append(this.chrome, this.frameScroll);
    this.fit();
    this.o.container.append(this.frameBox);
    addEventListener('message', this.onWindowMessage);
    instances.add(this);
    if (r.description) addTranscript('widget', `Component loaded (${r.uri}); the model is told:`, r.description);
  }

  // -------------------------------------------------------------------------- window.<vendor> bridge (MessagePort)

  private notifyBridge(method: string, params: unknown) {
    this.port?.postMessage({ jsonrpc: '2.0', method, params });
  }

  private setGlobals(changed: Record<string, unknown>) {
    Object.assign(this.globals, changed);
    this.notifyBridge('bridge/set_globals', { globals: changed });
  }

  private async handleBridge(m: Json) {
    if (!m || m.jsonrpc !== '2.0' || typeof m.method !== 'string') return;
    this.log.push({
      via: 'bridge',
      method: m.method,
      params:
        m.params instanceof Object && 'bytes' in m.params ? { ...m.params, bytes: `[${m.params.bytes?.byteLength} bytes]` } : m.params,
    });
    const reply = (result: unknown) => m.id !== undefined && this.port?.postMessage({ jsonrpc: '2.0', id: m.id, result });
    const fail = (code: number, message: string) =>
      m.id !== undefined && this.port?.postMessage({ jsonrpc: '2.0', id: m.id, error: { code, message } });
    try {
      const p = m.params ?? {};
      switch (m.method) {
        case 'bridge/setWidgetState':
          if (this.o.view.mode !== 'modal') widgetStates.set(this.o.turn.key, p.state);
          this.globals.widgetState = p.state;
          addTranscript('state', 'Widget state (the model sees it in later turns)', modelStateView(p.state));
          return;
        case 'bridge/intrinsicHeight':
          this.explicitHeight = Number(p.height) || null;
          this.fit();
          return;
        case 'bridge/size':
          this.measuredHeight = Number(p.height) || null;
          this.fit();
          return;
        case 'bridge/navigation':
          this.currentHref = p.href;
          this.navPath.textContent = p.path;
          this.backBtn.disabled = !p.canGoBack;
          this.frameBox.dataset.path = p.path;
          return;
        case 'tools/call':
          return reply(await this.callFromComponent(p.name, p.arguments ?? {}));
        case 'bridge/sendFollowUpMessage':
          if (typeof p.prompt !== 'string' || !p.prompt.trim()) return fail(-32602, 'prompt must be a non-blank string');
          addTranscript('followup', 'Follow-up message from the component', p.prompt);
          if (p.scrollToBottom !== false) transcriptList.lastElementChild?.scrollIntoView({ block: 'end' });
          return reply({});
        case 'ui/request-display-mode':
          return reply({ mode: await this.componentMode(p.mode) });
        case 'bridge/uploadFile': {
          const up = await uploadBlob(p.bytes, p.name, p.library === true, p.type);
          addTranscript('file', `File uploaded by the component: ${up.fileName}`, { fileId: up.fileId, mimeType: up.mimeType });
          return reply({ fileId: up.fileId });
        }
        case 'bridge/selectFiles':
          return reply(await pickFiles());
        case 'bridge/getFileDownloadUrl': {
          if (typeof p.fileId !== 'string') return fail(-32602, 'fileId must be a string');
          const r = await api(`/apps/api/files/${encodeURIComponent(p.fileId)}/url`, {});
          return reply({ downloadUrl: r.downloadUrl });
        }
        case 'bridge/requestModal':
          // A modal covers the page: it waits for pending approvals like a display mode change.
          await approvalsIdle();
          await this.openModal(p.template ?? null, p.params ?? null);
          return reply({});
        case 'bridge/requestClose':
          reply({});
          return void this.close('the component asked to close');
        case 'bridge/openExternal':
          return reply(this.openExternal(p.href, p.redirectUrl));
        case 'bridge/setOpenInAppUrl':
          if (typeof p.href !== 'string' || !/^https?:\/\//.test(p.href)) return fail(-32602, 'href must be an absolute http(s) URL');
          this.openInAppUrl = p.href;
          this.frameBox.dataset.openInApp = p.href;
          return reply({});
        default:
          return fail(-32601, `unknown bridge method ${m.method}`);
      }
    } catch (err) {
      fail(-32000, (err as Error).message);
    }
  }

  /** A tool call made by the component: visibility checked by Standin, destructive tools approved first. */
  private async callFromComponent(name: string, args: Record<string, unknown>) {
    const entry = conn!.tools.find((t) => t.descriptor.name === name);
    if (entry && !entry.visibility.app) throw new Error(`the tool '${name}' is not callable from the component (visibility)`);
    if (entry?.descriptor.annotations?.destructiveHint === true) {
      const ok = await this.o.turn.askApproval(`The component wants to call '${name}', which may delete or overwrite data.`, args);
      if (!ok) throw new Error('the user denied the call');
    }
    addTranscript('call', `Tool call from the component: ${name}`, args);
    const { result } = await api('/apps/api/call', { connection: conn!.id, name, arguments: args, _meta: clientMeta(), caller: 'app' });
    addTranscript('result', `Result of ${name}`, modelView(result));
    return this.withSession(result);
  }

  private openExternal(href: unknown, redirectUrl: unknown) {
    if (typeof href !== 'string' || !/^https?:\/\//i.test(href)) throw new Error('href must be an absolute http(s) URL');
    const url = new URL(href);
    const approved = this.redirectDomains.some((d) => originMatches(url, d));
    if (approved && redirectUrl !== false)
      url.searchParams.set('redirectUrl', typeof redirectUrl === 'string' ? redirectUrl : location.href);
    const final = url.toString();
    this.frameBox.dataset.lastExternal = final;
    addTranscript('link', 'Opened in the browser', final);
    window.open(final, '_blank', 'noopener,noreferrer');
    return {};
  }

  private async openModal(template: string | null, params: unknown) {
    const box = h('div', { className: 'modal-body' });
    const dialog = h('div', { className: 'modal', role: 'dialog', 'aria-modal': 'true', 'aria-label': 'Component modal' });
    const modal = new Widget({
      turn: this.o.turn,
      entry: this.o.entry,
      uri: template ?? this.o.uri ?? this.o.entry.templateUri,
      view: { mode: 'modal', params },
      toolInput: this.globals.toolInput,
      result: this.result,
      container: box,
      onClose: () => dialog.remove(),
    });
    dialog.append(
      h(
        'div',
        { className: 'modal-head' },
        h('strong', {}, 'Modal'),
        h('button', { type: 'button', className: 'modal-close', onclick: () => void modal.close('the user closed the modal') }, 'Close'),
      ),
      box,
    );
    modalRoot.append(dialog);
    try {
      await modal.mount();
    } catch (err) {
      dialog.remove();
      throw err;
    }
  }

  /**
   * Sizes the frame as MCP Apps hosts do with flexible dimensions: the iframe takes the height the component
   * reports. Inline, the box around it shows at most inlineCap() and scrolls beyond; in a modal the modal scrolls.
   * Fullscreen and picture-in-picture are fixed containers the component fills.
   */
  private fit() {
    if (!this.iframe) return;
    if (this.displayMode !== 'inline' && this.o.view.mode !== 'modal') {
      this.iframe.style.height = '';
      this.frameScroll.style.maxHeight = '';
      delete this.frameBox.dataset.scrolls;
      return;
    }
    const height = Math.max(40, Math.min(this.explicitHeight ?? this.measuredHeight ?? 320, MAX_FRAME_HEIGHT));
    this.iframe.style.height = `${height}px`;
    if (this.o.view.mode === 'modal') return;
    const cap = inlineCap();
    this.frameScroll.style.maxHeight = `${cap}px`;
    this.frameBox.dataset.scrolls = String(height > cap);
  }

  /** A display mode the component asks for: granted (or not) once no approval is pending, which it could cover. */
  private async componentMode(mode: unknown): Promise<DisplayMode> {
    await approvalsIdle();
    return this.setDisplayMode(mode, 'component');
  }

  /** Changes the display mode (host buttons or the component's request); returns the resulting mode. */
  setDisplayMode(mode: unknown, by: 'host' | 'component'): DisplayMode {
    if (!MODES.includes(mode as DisplayMode)) return this.displayMode;
    if (by === 'component' && this.appModes && !this.appModes.includes(mode as string)) return this.displayMode;
    if (this.o.view.mode === 'modal') return this.displayMode;
    const m = mode as DisplayMode;
    if (m === this.displayMode) return m;
    this.displayMode = m;
    this.frameBox.classList.remove(...MODES.map((x) => `mode-${x}`));
    this.frameBox.classList.add(`mode-${m}`);
    this.frameBox.dataset.mode = m;
    this.fit();
    this.contextChanged({ displayMode: m, maxHeight: this.maxHeight(m) });
    return m;
  }

  /** Host context changed (theme, locale, display mode): both protocols hear it. */
  contextChanged(changed: Record<string, unknown>) {
    this.setGlobals(changed);
    const ctx: Json = {};
    if ('theme' in changed) ctx.theme = changed.theme;
    if ('locale' in changed) ctx.locale = changed.locale;
    if ('displayMode' in changed) ctx.displayMode = changed.displayMode;
    if ('maxHeight' in changed) ctx.containerDimensions = { maxHeight: changed.maxHeight };
    if (Object.keys(ctx).length) this.toMcp({ jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: ctx });
  }

  /** The approved arguments reach the component (tool-input and the toolInput global). */
  deliverInput(args: unknown) {
    this.setGlobals({ toolInput: args });
    this.toMcp({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: args } });
  }

  deliverResult(result: Json) {
    this.result = result;
    this.setGlobals({ toolOutput: result.structuredContent ?? null, toolResponseMetadata: this.responseMetadata(result) });
    this.toMcp({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: this.withSession(result) });
  }

  cancelled(reason: string) {
    this.toMcp({ jsonrpc: '2.0', method: 'ui/notifications/tool-cancelled', params: { reason } });
  }

  // -------------------------------------------------------------------------- MCP Apps (window.postMessage)

  private handleWindowMessage(ev: MessageEvent) {
    if (!this.sandbox?.fromComponent(ev)) return; // only the document we rendered, on its origin, through its proxy
    const m = ev.data;
    if (m && m.standinBridge === 'hello' && ev.ports[0]) {
      if (this.port) this.port.close(); // a reload inside the frame starts a new bridge
      this.port = ev.ports[0];
      this.port.onmessage = (e) => void this.handleBridge(e.data);
      this.port.start();
      timings.bridgeReadyAt = performance.timeOrigin + performance.now();
      if (this.skybridge && !this.initialized) for (const q of this.pendingToMcp) this.postDirect(q);
      return;
    }
    if (m && m.jsonrpc === '2.0') void this.handleMcp(m);
  }

  private postToFrame(m: Json) {
    this.sandbox?.post(m);
  }

  /** Host → view messages wait until the view said `ui/notifications/initialized`. */
  private toMcp(m: Json) {
    if (this.initialized) return this.postToFrame(m);
    this.pendingToMcp.push(m);
    if (this.skybridge && this.port) this.postDirect(m);
  }

  /** Tool notifications to a skybridge component that has not initialized (it listens on window 'message'). */
  private postDirect(m: Json) {
    if (!/^ui\/notifications\/tool-/.test(m.method) || this.sentDirect.has(m.method)) return;
    this.sentDirect.add(m.method);
    this.postToFrame(m);
  }

  private hostContext() {
    return {
      toolInfo: { tool: this.o.entry.descriptor },
      theme: settings.theme,
      displayMode: this.displayMode,
      availableDisplayModes: MODES,
      containerDimensions: { maxHeight: this.maxHeight(this.displayMode) },
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

  private async handleMcp(m: Json) {
    this.log.push({ via: 'mcp-apps', method: m.method, id: m.id, params: m.params });
    if (m.method === undefined && m.id !== undefined) {
      this.waiting.get(m.id)?.(m);
      this.waiting.delete(m.id);
      return;
    }
    const reply = (result: unknown) => m.id !== undefined && this.postToFrame({ jsonrpc: '2.0', id: m.id, result });
    const fail = (code: number, message: string) =>
      m.id !== undefined && this.postToFrame({ jsonrpc: '2.0', id: m.id, error: { code, message } });
    const p = m.params ?? {};
    try {
      switch (m.method) {
        case 'ui/initialize':
          this.appModes = Array.isArray(p.appCapabilities?.availableDisplayModes) ? p.appCapabilities.availableDisplayModes : null;
          this.providesTools = typeof p.appCapabilities?.tools === 'object' && p.appCapabilities.tools !== null;
          return reply({
            protocolVersion: typeof p.protocolVersion === 'string' ? p.protocolVersion : PROTOCOL_VERSION,
            hostInfo: { name: 'standin', version: '0.1.0' },
            hostCapabilities: {
              openLinks: {},
              serverTools: {},
              serverResources: {},
              logging: {},
              updateModelContext: {},
              message: {},
              sandbox: this.sandboxInfo,
            },
            hostContext: this.hostContext(),
          });
        case 'ui/notifications/initialized': {
          this.initialized = true;
          timings.initializedAt = performance.timeOrigin + performance.now();
          const queued = this.pendingToMcp.splice(0).filter((q) => !this.sentDirect.has(q.method));
          // tool-input comes first (the spec requires it before tool-result), whatever order the host queued.
          const hasInput =
            queued.some((q) => q.method === 'ui/notifications/tool-input') || this.sentDirect.has('ui/notifications/tool-input');
          if (!hasInput && this.globals.toolInput !== null)
            this.postToFrame({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: this.globals.toolInput } });
          for (const q of queued) this.postToFrame(q);
          if (
            this.result &&
            !queued.some((q) => q.method === 'ui/notifications/tool-result') &&
            !this.sentDirect.has('ui/notifications/tool-result')
          )
            this.postToFrame({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: this.withSession(this.result) });
          if (this.providesTools) void this.listAppTools();
          return;
        }
        case 'notifications/tools/list_changed':
          if (this.providesTools) void this.listAppTools();
          return;
        case 'ui/notifications/size-changed':
          if (typeof p.height === 'number' && p.height >= 0) {
            this.explicitHeight = Math.ceil(p.height);
            this.fit();
          }
          return;
        case 'ui/message': {
          const text = Array.isArray(p.content) ? p.content.map((c: Json) => c?.text ?? '').join('\n') : (p.content?.text ?? '');
          addTranscript('followup', `Message from the component (${p.role ?? 'user'})`, text);
          return reply({});
        }
        case 'ui/open-link':
          if (typeof p.url !== 'string' || !/^https?:\/\//i.test(p.url)) return fail(-32602, 'Invalid URL');
          this.frameBox.dataset.lastExternal = p.url;
          addTranscript('link', 'Opened in the browser', p.url);
          window.open(p.url, '_blank', 'noopener,noreferrer');
          return reply({});
        case 'ui/request-display-mode':
          return reply({ mode: await this.componentMode(p.mode) });
        case 'ui/update-model-context':
          addTranscript('context', 'Model context from the component', { content: p.content, structuredContent: p.structuredContent });
          return reply({});
        case 'tools/call':
          return reply(await this.callFromComponent(p.name, p.arguments ?? {}));
        case 'resources/read':
          return reply(await api('/apps/api/resource', { connection: conn!.id, uri: p.uri }));
        case 'ui/notifications/request-teardown':
          return void this.close('the component asked to close');
        case 'ui/download-file': {
          const names: string[] = [];
          for (const c of Array.isArray(p.contents) ? p.contents : []) {
            if (c?.type === 'resource_link' && typeof c.uri === 'string' && /^https?:/.test(c.uri)) {
              window.open(c.uri, '_blank', 'noopener,noreferrer');
              names.push(c.uri);
            } else if (c?.type === 'resource' && c.resource) {
              const r = c.resource;
              const bytes =
                typeof r.blob === 'string'
                  ? Uint8Array.from(atob(r.blob), (ch) => ch.charCodeAt(0))
                  : new TextEncoder().encode(String(r.text ?? ''));
              const a = h('a', {
                href: URL.createObjectURL(new Blob([bytes], { type: r.mimeType ?? 'application/octet-stream' })),
                download:
                  String(r.uri ?? 'download')
                    .split('/')
                    .pop() || 'download',
              });
              a.click();
              names.push(String(r.uri));
            }
          }
          addTranscript('file', 'Download requested by the component', names);
          return reply({});
        }
        case 'notifications/message':
          addTranscript('log', `Log (${p.level ?? 'info'}) from the component`, p.data);
          return;
        case 'ping':
          return reply({});
        default:
          if (typeof m.method === 'string' && m.method.startsWith('ui/notifications/sandbox-')) return;
          return fail(-32601, `Method not found: ${m.method}`);
      }
    } catch (err) {
      fail(-32000, (err as Error).message);
    }
  }

  private request(method: string, params: unknown, timeoutMs: number): Promise<Json | null> {
    const id = `host-${++this.seq}`;
    return new Promise((resolve) => {
      const t = setTimeout(() => (this.waiting.delete(id), resolve(null)), timeoutMs);
      this.waiting.set(id, (m) => (clearTimeout(t), resolve(m)));
      this.postToFrame({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Asks the view for the tools it provides (`tools/list` host → view) and shows them beside the transcript. */
  private async listAppTools() {
    const m = await this.request('tools/list', {}, 10_000);
    this.appTools = Array.isArray(m?.result?.tools) ? m.result.tools.filter((t: Json) => typeof t?.name === 'string') : [];
    renderAppTools();
  }

  /** Calls a tool the view provides (`tools/call` host → view); rejects with the view's error. */
  async callAppTool(name: string, args: Record<string, unknown>): Promise<Json> {
    const m = await this.request('tools/call', { name, arguments: args }, 60_000);
    if (!m) throw new Error(`the component did not answer the call of '${name}'`);
    if (m.error) throw new Error(m.error.message ?? `the component refused the call of '${name}'`);
    return m.result;
  }

  /** Sends ui/resource-teardown (and waits briefly for the answer), then removes the frame. */
  async teardown(reason: string) {
    if (this.initialized)
      teardowns.push({ widgetSessionId: this.sessionId, reason, response: await this.request('ui/resource-teardown', { reason }, 2000) });
    removeEventListener('message', this.onWindowMessage);
    this.sandbox?.dispose();
    this.port?.close();
    this.frameBox.remove();
    instances.delete(this);
    if (this.appTools.length) renderAppTools();
  }

  async close(reason: string) {
    await this.teardown(reason);
    if (this.o.onClose) this.o.onClose();
    else this.o.turn.setStatus(`Component closed (${reason}).`);
  }
}

// ------------------------------------------------------------------------------------------------ app-provided tools

/** Lists the tools of every mounted component that provides some, each with a form the model's calls go through. */
function renderAppTools() {
  appToolsList.textContent = '';
  for (const w of instances) for (const t of w.appTools) appToolsList.append(appToolForm(w, t));
  appToolsPane.hidden = appToolsList.childElementCount === 0;
}

function appToolForm(w: Widget, t: Json) {
  const owner = w.o.entry.descriptor.name;
  const args = h('textarea', { name: 'arguments', rows: 3, cols: 30, 'aria-label': `Arguments of ${t.name}` });
  args.value = pretty(exampleArgs(t.inputSchema));
  const form = h(
    'form',
    { className: 'call-form' },
    h('label', {}, 'Arguments (JSON)', args),
    h('button', { type: 'submit' }, `Call ${t.name}`),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(args.value || '{}');
    } catch (err) {
      return setStatus(`The arguments are not JSON: ${(err as Error).message}`, 'error');
    }
    if (
      t.annotations?.destructiveHint === true &&
      !(await w.o.turn.askApproval(`The model wants to call '${t.name}' of the component, which may delete or overwrite data.`, parsed))
    ) {
      addTranscript('cancel', `Denied: ${t.name} (tool of the ${owner} component)`);
      return;
    }
    addTranscript('call', `Tool call: ${t.name} (tool of the ${owner} component)`, parsed);
    try {
      addTranscript('result', `Result of ${t.name}`, modelView(await w.callAppTool(t.name, parsed)));
    } catch (err) {
      addTranscript('error', `The call of ${t.name} failed`, (err as Error).message);
    }
  });
  return h(
    'details',
    { className: 'tool app-tool', dataset: { tool: t.name, widgetSession: w.sessionId } },
    h('summary', {}, h('code', {}, t.name), ' ', h('span', { className: 'badge' }, `${owner} component`)),
    t.description ? h('p', {}, t.description) : null,
    form,
    h('details', {}, h('summary', {}, 'Descriptor'), h('pre', {}, pretty(t))),
  );
}

addEventListener('resize', () => {
  for (const w of instances) w.resized();
});

/** The structured widget state form shows the model only modelContent and imageIds. */
function modelStateView(state: Json) {
  if (state && typeof state === 'object' && ('modelContent' in state || 'privateContent' in state))
    return { modelContent: state.modelContent ?? null, imageIds: state.imageIds ?? [] };
  return state;
}

function originMatches(url: URL, domain: string) {
  const m = /^([a-z][a-z0-9+.-]*):\/\/(\*\.)?([^/:]+)(:\d+)?\/?$/i.exec(domain);
  if (!m || `${m[1].toLowerCase()}:` !== url.protocol) return false;
  if ((m[4] ? m[4].slice(1) : '') !== url.port) return false;
  return m[2] ? url.hostname.endsWith(`.${m[3].toLowerCase()}`) : url.hostname === m[3].toLowerCase();
}

/** The file library picker (selectFiles): files already uploaded with library: true. */
async function pickFiles(): Promise<{ fileId: string; fileName: string; mimeType: string }[]> {
  const { data } = await api<{ data: { fileId: string; fileName: string; mimeType: string }[] }>('/apps/api/files');
  return new Promise((resolve) => {
    const boxes = data.map((f) => h('input', { type: 'checkbox', value: f.fileId, 'aria-label': f.fileName }));
    const dialog = h(
      'div',
      { className: 'modal picker', role: 'dialog', 'aria-label': 'Select files' },
      h('div', { className: 'modal-head' }, h('strong', {}, 'Select files from your library')),
      data.length
        ? h('ul', {}, ...data.map((f, i) => h('li', {}, h('label', {}, boxes[i], ` ${f.fileName} (${f.mimeType})`))))
        : h('p', {}, 'The library is empty.'),
    );
    const done = (files: typeof data) => (
      dialog.remove(),
      resolve(files.map((f) => ({ fileId: f.fileId, fileName: f.fileName, mimeType: f.mimeType })))
    );
    dialog.append(
      h('button', { type: 'button', className: 'select', onclick: () => done(data.filter((_, i) => boxes[i].checked)) }, 'Select'),
      ' ',
      h('button', { type: 'button', onclick: () => done([]) }, 'Cancel'),
    );
    modalRoot.append(dialog);
  });
}

// ------------------------------------------------------------------------------------------------ deep links

async function boot() {
  // Interactive: the page is built and its controls work (a deep link's call may still be running).
  timings.interactiveAt = performance.now();
  document.body.dataset.interactive = 'true';
  const keyGiven = () => new Promise<void>((resolve) => (onKey = resolve));
  if (needsKey && !sessionStorage.getItem(KEY_ITEM)) {
    askForKey();
    setStatus('Enter the admin key of this Standin to use the host.');
    await keyGiven();
  }
  const q = new URLSearchParams(location.search);
  const server = q.get('server');
  if (server) {
    serverInput.value = server;
    let connected = await connect(server);
    // A deep link waits for the right key: each new key retries it.
    while (!connected && needsKey && lastConnectStatus === 401) {
      await keyGiven();
      connected = await connect(server);
    }
    if (connected) {
      const tool = q.get('tool');
      if (tool) {
        let args: Record<string, unknown> = {};
        try {
          args = q.get('args') ? JSON.parse(q.get('args')!) : {};
        } catch (err) {
          setStatus(`The args parameter is not JSON: ${(err as Error).message}`, 'error');
          return;
        }
        // Not awaited: an approval-gated call waits for the user.
        void callAsModel(tool, args);
      }
    }
  }
  document.body.dataset.ready = 'true';
}
void boot();
