// One mounted component: its frame, its globals, its display mode and size, and the two channels it talks on
// (the `window.<vendor>` bridge over a MessagePort, MCP Apps JSON-RPC over postMessage). What each message
// means is decided in vendor-bridge.ts and mcp-apps.ts; this file keeps the state they share.
import type { ToolEntry } from '../../src/apps/host/wire.js';
import { renderTemplate } from './api.js';
import { approvalPending, setCover } from './approvals.js';
import { Cell } from './cell.js';
import { frameHeight, inlineCap, isMode, maxHeightFor, MODES, type DisplayMode } from './display.js';
import { currentCspProfile } from './csp-profile.js';
import { createFrame, type ComponentFrame } from './frame.js';
import { isRpc, modelView, obj, rid, type JsonObject, type RpcMessage, type ToolDescriptor, type ToolResult } from './json.js';
import { connection, now, teardowns, timings, widgetStates } from './state.js';
import { settings, V } from './settings.js';
import { addTranscript } from './transcript.js';

/** The turn a component belongs to, as the component's requests need it. */
export interface TurnRef {
  readonly key: string;
  readonly title: string;
  setStatus(text: string, kind?: 'info' | 'error'): void;
}

/** What a message of each channel does, and how a modal is opened (given by mount.ts). */
export interface WidgetHandlers {
  bridge(w: Widget, m: RpcMessage): Promise<unknown>;
  mcp(w: Widget, m: RpcMessage): Promise<unknown>;
  openModal(w: Widget, template: string | null, params: unknown): Promise<void>;
}

export interface WidgetOptions {
  turn: TurnRef;
  entry: ToolEntry;
  tool: ToolDescriptor;
  /** Another template of the same server (requestModal), or null for the tool's template. */
  uri: string | null;
  view: { mode: 'inline' | 'modal'; params: unknown };
  toolInput: unknown;
  result?: ToolResult;
  onClose?: () => void;
  handlers: WidgetHandlers;
}

/** What the frame's box shows (rendered by frame-box.ts). */
export interface FrameView {
  mode: DisplayMode;
  bordered: boolean;
  path: string | null;
  canGoBack: boolean;
  href: string;
  openInApp: string | null;
  lastExternal: string | null;
  /** The cap of the inline box (px) and whether the frame is taller, or null outside inline. */
  cap: number | null;
  scrolls: boolean | null;
  /** The component was torn down: its box goes. */
  gone: boolean;
}

/** Every mounted component (the tools they provide are listed from here). */
export const instances = new Set<Widget>();
/** Bumped when a component's provided tools change or it goes away. */
export const appToolsChanged = new Cell(0);

export class Widget {
  readonly sessionId = rid('ws');
  frame: ComponentFrame | null = null;
  readonly view = new Cell<FrameView>({
    mode: 'inline',
    bordered: true,
    path: null,
    canGoBack: false,
    href: '',
    openInApp: null,
    lastExternal: null,
    cap: null,
    scrolls: null,
    gone: false,
  });
  port: MessagePort | null = null;
  initialized = false;
  readonly pendingToMcp: RpcMessage[] = [];
  /** Display modes the view declared in ui/initialize (null: it declared none). */
  appModes: string[] | null = null;
  /** The view declared `appCapabilities.tools`: it provides tools the host lists and may call. */
  providesTools = false;
  /** The tools the view provides (its `tools/list`). */
  appTools: JsonObject[] = [];
  redirectDomains: string[] = [];
  sandboxInfo: JsonObject = {};
  /** A `text/html+skybridge` document: its component may never send ui/initialize, so notifications go straight to it. */
  skybridge = false;
  readonly sentDirect = new Set<string>();
  /** The height the component asked for (MCP Apps size-changed, notifyIntrinsicHeight). */
  private explicitHeight: number | null = null;
  /** The height the bridge measured (used while the component asks for none). */
  private measuredHeight: number | null = null;
  private seq = 0;
  private waiting = new Map<string, (m: RpcMessage) => void>();
  result: ToolResult | undefined;
  displayMode: DisplayMode = 'inline';
  globals: JsonObject;
  readonly log: JsonObject[] = [];
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
      maxHeight: maxHeightFor('inline'),
      safeArea: { insets: { top: 0, bottom: 0, left: 0, right: 0 } },
      view: o.view,
      userAgent: { device: { type: 'desktop' }, capabilities: { hover: true, touch: false } },
      locale: settings.locale,
    };
  }

  get isModal() {
    return this.o.view.mode === 'modal';
  }

  responseMetadata(result: ToolResult) {
    return {
      ...(result._meta ?? {}),
      [V('widgetSessionId')]: this.sessionId,
      status: result.isError ? 'error' : 'success',
      call_tool_result: modelView(result),
      mcp_tool_result: this.withSession(result),
    };
  }

  /** The result with this component's widgetSessionId in its _meta. */
  withSession(result: ToolResult): ToolResult {
    return { ...result, _meta: { ...(result._meta ?? {}), [V('widgetSessionId')]: this.sessionId } };
  }

  /** Renders the template on the widget origin and creates the frame (frame-box.ts puts it on the page). */
  async mount() {
    const conn = connection.get();
    if (!conn) throw new Error('not connected');
    const r = await renderTemplate({
      connection: conn.id,
      ...(this.o.uri ? { uri: this.o.uri } : { tool: this.o.tool.name }),
      globals: this.globals,
      widgetSessionId: this.sessionId,
      cspProfile: currentCspProfile(),
    });
    timings.renderApiAt = now();
    this.redirectDomains = r.csp.redirectDomains;
    this.skybridge = r.mimeType === 'text/html+skybridge';
    const { connectDomains, resourceDomains, frameDomains, baseUriDomains } = r.csp;
    this.sandboxInfo = { permissions: r.permissions, csp: { connectDomains, resourceDomains, frameDomains, baseUriDomains } };
    this.frame = createFrame(r, { title: `Component of ${this.o.tool.name}`, sessionId: this.sessionId, tool: this.o.tool.name });
    this.patchView({ bordered: r.prefersBorder !== false });
    this.fit();
    addEventListener('message', this.onWindowMessage);
    instances.add(this);
    if (r.description) addTranscript('widget', `Component loaded (${r.uri}); the model is told:`, r.description);
  }

  patchView(changed: Partial<FrameView>) {
    this.view.set({ ...this.view.get(), ...changed });
  }

  // ---------------------------------------------------------------------------------------------- channels

  private handleWindowMessage(ev: MessageEvent) {
    if (!this.frame?.isFrom(ev)) return;
    const m: unknown = ev.data;
    if (obj(m).standinBridge === 'hello' && ev.ports[0]) {
      if (this.port) this.port.close(); // a reload inside the frame starts a new bridge
      const port = ev.ports[0];
      this.port = port;
      port.onmessage = (e) => {
        if (isRpc(e.data) && typeof e.data.method === 'string') void this.o.handlers.bridge(this, e.data);
      };
      port.start();
      timings.bridgeReadyAt = now();
      if (this.skybridge && !this.initialized) for (const q of this.pendingToMcp) this.postDirect(q);
      return;
    }
    if (!isRpc(m)) return;
    this.log.push({ via: 'mcp-apps', method: m.method, id: m.id, params: m.params });
    if (m.method === undefined && m.id !== undefined) {
      this.waiting.get(String(m.id))?.(m);
      this.waiting.delete(String(m.id));
      return;
    }
    void this.o.handlers.mcp(this, m);
  }

  /** Sends a message on the `window.<vendor>` bridge. */
  toBridge(m: RpcMessage) {
    this.port?.postMessage(m);
  }

  /** Posts an MCP Apps message to the view. */
  postToFrame(m: RpcMessage) {
    this.frame?.post(m);
  }

  /** Host → view messages wait until the view said `ui/notifications/initialized`. */
  toMcp(m: RpcMessage) {
    if (this.initialized) return this.postToFrame(m);
    this.pendingToMcp.push(m);
    if (this.skybridge && this.port) this.postDirect(m);
  }

  /** Tool notifications to a skybridge component that has not initialized (it listens on window 'message'). */
  private postDirect(m: RpcMessage) {
    if (!m.method || !/^ui\/notifications\/tool-/.test(m.method) || this.sentDirect.has(m.method)) return;
    this.sentDirect.add(m.method);
    this.postToFrame(m);
  }

  /** A host → view request; resolves with the answer, or null after `timeoutMs`. */
  request(method: string, params: unknown, timeoutMs: number): Promise<RpcMessage | null> {
    const id = `host-${++this.seq}`;
    return new Promise((resolve) => {
      const t = setTimeout(() => (this.waiting.delete(id), resolve(null)), timeoutMs);
      this.waiting.set(id, (m) => (clearTimeout(t), resolve(m)));
      this.postToFrame({ jsonrpc: '2.0', id, method, params });
    });
  }

  // ---------------------------------------------------------------------------------------------- context

  private setGlobals(changed: JsonObject) {
    Object.assign(this.globals, changed);
    this.toBridge({ jsonrpc: '2.0', method: 'bridge/set_globals', params: { globals: changed } });
  }

  /** Host context changed (theme, locale, display mode): both protocols hear it. */
  contextChanged(changed: JsonObject) {
    this.setGlobals(changed);
    const ctx: JsonObject = {};
    if ('theme' in changed) ctx.theme = changed.theme;
    if ('locale' in changed) ctx.locale = changed.locale;
    if ('displayMode' in changed) ctx.displayMode = changed.displayMode;
    if ('maxHeight' in changed) ctx.containerDimensions = { maxHeight: changed.maxHeight };
    if (Object.keys(ctx).length) this.toMcp({ jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: ctx });
  }

  /** The component's widget state: kept for the turn (a modal's is its own), and shown to the model. */
  setWidgetState(state: unknown) {
    if (!this.isModal) widgetStates.set(this.o.turn.key, state);
    this.globals.widgetState = state;
  }

  /** The approved arguments reach the component (tool-input and the toolInput global). */
  deliverInput(args: unknown) {
    this.setGlobals({ toolInput: args });
    this.toMcp({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: args } });
  }

  deliverResult(result: ToolResult) {
    this.result = result;
    this.setGlobals({ toolOutput: result.structuredContent ?? null, toolResponseMetadata: this.responseMetadata(result) });
    this.toMcp({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: this.withSession(result) });
  }

  cancelled(reason: string) {
    this.toMcp({ jsonrpc: '2.0', method: 'ui/notifications/tool-cancelled', params: { reason } });
  }

  // ---------------------------------------------------------------------------------------------- display

  /** The window changed size: the inline cap (maxHeight, containerDimensions) with it. */
  resized() {
    this.fit();
    const maxHeight = maxHeightFor(this.displayMode);
    if (maxHeight !== this.globals.maxHeight) this.contextChanged({ maxHeight });
  }

  /** A height the component reported (`explicit`: it asked for it; else the bridge measured it). */
  reportHeight(height: number | null, explicit: boolean) {
    if (explicit) this.explicitHeight = height;
    else this.measuredHeight = height;
    this.fit();
  }

  /**
   * Sizes the frame as MCP Apps hosts do with flexible dimensions: the iframe takes the height the component
   * reports. Inline, the box around it shows at most inlineCap() and scrolls beyond; in a modal the modal scrolls.
   * Fullscreen and picture-in-picture are fixed containers the component fills.
   */
  private fit() {
    const el = this.frame?.element;
    if (!el) return;
    if (this.displayMode !== 'inline' && !this.isModal) {
      el.style.height = '';
      return this.patchView({ cap: null, scrolls: null });
    }
    const height = frameHeight(this.explicitHeight, this.measuredHeight);
    el.style.height = `${height}px`;
    if (this.isModal) return;
    const cap = inlineCap();
    this.patchView({ cap, scrolls: height > cap });
  }

  /**
   * A display mode the component asks for, answered at once: a mode that would cover the page (fullscreen,
   * picture-in-picture) is declined with the current mode while the user has an approval to answer.
   */
  componentMode(mode: unknown): DisplayMode {
    if (approvalPending() && mode !== 'inline') return this.displayMode;
    return this.setDisplayMode(mode, 'component');
  }

  /** Changes the display mode (host buttons or the component's request); returns the resulting mode. */
  setDisplayMode(mode: unknown, by: 'host' | 'component'): DisplayMode {
    if (!isMode(mode) || this.isModal) return this.displayMode;
    if (by === 'component' && this.appModes && !this.appModes.includes(mode)) return this.displayMode;
    if (mode === this.displayMode) return mode;
    this.displayMode = mode;
    setCover(this.sessionId, mode !== 'inline');
    this.patchView({ mode });
    this.fit();
    this.contextChanged({ displayMode: mode, maxHeight: maxHeightFor(mode) });
    return mode;
  }

  /** The modes the host offers (MCP Apps availableDisplayModes). */
  get modes() {
    return MODES;
  }

  // ---------------------------------------------------------------------------------------------- tools, teardown

  /** Asks the view for the tools it provides (`tools/list` host → view). */
  async listAppTools() {
    const m = await this.request('tools/list', {}, 10_000);
    const tools = m ? obj(m.result).tools : undefined;
    this.appTools = Array.isArray(tools) ? tools.map(obj).filter((t) => typeof t.name === 'string') : [];
    appToolsChanged.update((n) => n + 1);
  }

  /** Calls a tool the view provides (`tools/call` host → view); rejects with the view's error. */
  async callAppTool(name: string, args: JsonObject): Promise<ToolResult> {
    const m = await this.request('tools/call', { name, arguments: args }, 60_000);
    if (!m) throw new Error(`the component did not answer the call of '${name}'`);
    if (m.error) throw new Error(m.error.message ?? `the component refused the call of '${name}'`);
    return obj(m.result);
  }

  /** Sends ui/resource-teardown (and waits briefly for the answer), then removes the frame. */
  async teardown(reason: string) {
    if (this.initialized)
      teardowns.push({ widgetSessionId: this.sessionId, reason, response: await this.request('ui/resource-teardown', { reason }, 2000) });
    removeEventListener('message', this.onWindowMessage);
    this.port?.close();
    this.frame?.element.remove();
    setCover(this.sessionId, false);
    this.patchView({ gone: true });
    instances.delete(this);
    if (this.appTools.length) appToolsChanged.update((n) => n + 1);
  }

  /** Tears down, then leaves the modal or tells the turn. */
  async close(reason: string) {
    await this.teardown(reason);
    if (this.o.onClose) this.o.onClose();
    else this.o.turn.setStatus(`Component closed (${reason}).`);
  }
}
