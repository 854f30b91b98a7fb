import { createHash, randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ApiError, invalid, notFound } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import { UI_MIME_TYPES, type ResourceContent, type ToolDescriptor } from '../lint/descriptor.js';
import { sortFindings, type Finding } from '../lint/findings.js';
import { lintServer } from '../lint/server.js';
import { callToolRaw, connectServer, parseServerSpec, readTemplate, templateUri, type ServerSpec } from '../mcp.js';
import { buildCspHeader, effectiveCsp, type CspProfile, type EffectiveCsp } from './csp.js';
import { cspNeedFindings, needOfReport } from './csp-report.js';
import { asset } from './assets.js';
import { FileStore } from './files.js';
import * as store from './store.js';
import type { Exec } from '../../store/db.js';

export interface Visibility {
  model: boolean;
  app: boolean;
}

/**
 * Who may call a tool. `ui.visibility` wins; without it, the compatibility keys narrow the MCP default
 * `[model, app]`: `<vendor>/visibility: private` hides it from the model, `<vendor>/widgetAccessible: false`
 * keeps the component from calling it.
 */
export function visibilityOf(tool: ToolDescriptor, vendor: string): Visibility {
  const m = tool._meta ?? {};
  const vis = m.ui?.visibility;
  if (Array.isArray(vis)) return { model: vis.includes('model'), app: vis.includes('app') };
  return { model: m[`${vendor}/visibility`] !== 'private', app: m[`${vendor}/widgetAccessible`] !== false };
}

interface Connection {
  id: string;
  server: string;
  spec: ServerSpec;
  client: Client;
  /** The locale sent on initialize and with the lint's sample calls. */
  locale: string;
  tools: ToolDescriptor[];
  findings: Finding[];
  templates: Record<string, { contents?: ResourceContent[]; error?: string }>;
  /** The server's name and version from initialize. */
  serverInfo: object | undefined;
}

/** A component document waiting on the widget origin. */
export interface WidgetDoc {
  id: string;
  html: string;
  csp: string;
  /** The strict policy sent report-only beside a lenient one ('' under the strict profile). */
  cspReportOnly: string;
  /** The host (name:port) the document must be requested on: its origin. */
  origin: string;
  createdAt: number;
}

export interface RenderRequest {
  connection: string;
  /** The template: a tool's template, or a URI the component asked for (requestModal). */
  tool?: string;
  uri?: string;
  /** Initial values of the bridge globals (toolInput, toolOutput, …). */
  globals: Record<string, unknown>;
  widgetSessionId: string;
  /** The CSP profile of this rendering (the host page's choice); the `appsCsp` setting when absent. */
  cspProfile?: CspProfile;
}

export interface RenderResult {
  /** The document on its own (served with its CSP header; for scripts and debugging). */
  url: string;
  /** The sandbox proxy page the host page frames; it loads `html` into its inner frame under the same CSP. */
  sandboxUrl: string;
  /** The document (the template with the bridge inlined) that the host sends in sandbox-resource-ready. */
  html: string;
  cspProfile: CspProfile;
  /** The strict policy sent report-only under the lenient profile (its violations say what a strict host refuses). */
  cspReportOnly: string;
  origin: string;
  uri: string;
  mimeType: string;
  csp: EffectiveCsp;
  cspHeader: string;
  prefersBorder: boolean | null;
  description: string | null;
  domain: string | null;
  /** The iframe `allow` attribute from `ui.permissions` (camera, microphone, geolocation, clipboard-write). */
  allow: string;
  permissions: Record<string, object>;
}

export interface HostOptions {
  /** The host's name now (`vendor`: a config may change it while Standin runs). */
  vendor: () => string;
  clock: Clock;
  /** Standin's own base URL (download URLs). */
  publicUrl: () => string;
  /** The CSP profile components get unless the page chooses (the `appsCsp` setting). */
  cspProfile: () => CspProfile;
  /** Base origin of the widget listener (`http://127.0.0.1:port`). */
  widgetOrigin: () => string;
  /** Whether per-app origins under `*.localhost` work (the host listens on loopback). */
  loopback: boolean;
  /** Audit trail of the CSP each component gets (the MCP Apps spec asks hosts to log it), and why connections failed. */
  log?: (obj: unknown, msg: string) => void;
  /** The fetch of URL transports: through the SSRF-guarded outbound client, like webhooks and JWKS. */
  fetch?: FetchLike;
  /** The store that every instance shares: connections, documents and files live there (no sticky sessions). */
  db: () => Exec;
}

/** What the store keeps of a connection: enough for any instance to serve it with its own MCP client. */
interface ConnectionState {
  tools: ToolDescriptor[];
  findings: Finding[];
  templates: Record<string, { contents?: ResourceContent[]; error?: string }>;
  serverInfo: object | undefined;
}

/**
 * What a failed connection tells the client, whatever the cause: the same words for a closed port, a refused
 * address and a server that answered something else, so the host cannot be used to map a network.
 */
const unreachable = (server: string) =>
  new ApiError(
    'invalid_request_error',
    `'server': could not connect to ${server}. Check that it is an MCP server (Streamable HTTP or SSE) and that Standin may reach it: private and loopback addresses only while Standin listens on loopback, or with --outbound-allow.`,
    { status: 502, param: 'server', code: 'server_unreachable' },
  );

/** How long a component document stays servable (Standin clock). */
const DOC_TTL_MS = 24 * 3_600_000;
const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The app host's server side: MCP connections, tool calls with the visibility rules, component documents, files. */
export class HostService {
  readonly files: FileStore;
  /** This instance's MCP clients, by connection id (the connections themselves are in the store). */
  private clients = new Map<string, Promise<Client>>();
  private byServer = new Map<string, Promise<Connection>>();
  private allowedCommands = new Set<string>();
  /** Templates read while the tool call runs (one-shot, 30 s), so rendering does not wait for resources/read. */
  private prefetched = new Map<string, { at: number; read: Promise<{ contents?: ResourceContent[]; error?: string }> }>();

  constructor(readonly opts: HostOptions) {
    this.files = new FileStore(opts.clock, opts.db);
  }

  /** Lets the host page run this local command over stdio (only commands given on the command line may run). */
  allowCommand(command: string) {
    this.allowedCommands.add(command.trim());
  }

  /** Connects (or reuses the connection) to a server; lists tools, reads templates, lints them. */
  async connect(server: string, opts: { refresh?: boolean; locale?: string } = {}): Promise<Connection> {
    const key = server.trim();
    let spec: ServerSpec;
    try {
      spec = parseServerSpec(key);
    } catch (err) {
      throw invalid(`'server' ${(err as Error).message}`, 'server');
    }
    if (spec.kind === 'stdio' && !this.allowedCommands.has(key)) {
      throw new ApiError(
        'permission_error',
        `'server': the host page may only run commands given on the command line; start it with: standin apps open '${key}'`,
        { param: 'server', code: 'command_not_allowed' },
      );
    }
    const existing = this.byServer.get(key);
    if (existing) {
      try {
        const c = await existing;
        // Refresh: the same connection (so other tabs keep working) with the server's current tools and templates.
        if (opts.refresh) {
          await this.load(c);
          await this.save(c);
        }
        return c;
      } catch (err) {
        if (err instanceof ApiError && err.code !== 'server_unreachable') throw err;
        /* the connection failed or died: connect again below */
      }
    }
    const p = this.open(key, spec, opts.locale ?? 'en-US');
    this.byServer.set(key, p);
    p.catch(() => this.byServer.delete(key));
    return p;
  }

  private async open(server: string, spec: ServerSpec, locale: string): Promise<Connection> {
    let client: Client;
    try {
      client = await connectServer(spec, { vendor: this.opts.vendor(), locale, stderr: 'ignore', fetch: this.opts.fetch });
    } catch (err) {
      this.opts.log?.({ server, err: (err as Error).message }, 'app host: could not connect to an MCP server');
      throw unreachable(server);
    }
    const c: Connection = {
      id: `conn_${randomBytes(8).toString('hex')}`,
      server,
      spec,
      client,
      locale,
      tools: [],
      findings: [],
      templates: {},
      serverInfo: client.getServerVersion(),
    };
    try {
      await this.load(c);
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
    client.onclose = () => {
      // A closed stdio or SSE connection is replaced on the next connect (or the next request naming it).
      this.byServer.delete(server);
      this.clients.delete(c.id);
    };
    await this.save(c);
    this.clients.set(c.id, Promise.resolve(client));
    return c;
  }

  /** Saves what any instance needs to serve the connection. */
  private async save(c: Connection): Promise<void> {
    const state: ConnectionState = { tools: c.tools, findings: c.findings, templates: c.templates, serverInfo: c.serverInfo };
    await store.saveConnection(this.opts.db(), {
      id: c.id,
      server: c.server,
      locale: c.locale,
      state: JSON.stringify(state),
      updated_at: this.opts.clock.now(),
    });
  }

  /**
   * This instance's MCP client of a connection another instance (or this one) opened: reused, or opened now
   * from the saved server and locale (without the connect-time lint: its result is saved with the connection).
   */
  private client(row: store.ConnectionRow, spec: ServerSpec): Promise<Client> {
    let p = this.clients.get(row.id);
    if (!p) {
      p = connectServer(spec, { vendor: this.opts.vendor(), locale: row.locale, stderr: 'ignore', fetch: this.opts.fetch }).then(
        (client) => {
          client.onclose = () => this.clients.delete(row.id);
          return client;
        },
        (err: unknown) => {
          this.clients.delete(row.id);
          this.opts.log?.({ server: row.server, err: (err as Error).message }, 'app host: could not connect to an MCP server');
          throw unreachable(row.server);
        },
      );
      this.clients.set(row.id, p);
    }
    return p;
  }

  /**
   * Lists tools, reads their templates and lints them (at connect and on refresh) with the lint of `standin apps
   * lint` and its defaults (submission rules, automatic sample calls), so the page and the CLI report the same.
   */
  private async load(c: Connection) {
    const v = this.opts.vendor();
    let r: Awaited<ReturnType<typeof lintServer>>;
    try {
      r = await lintServer(c.client, { vendor: v, submission: true, autoSamples: true, callMeta: { [`${v}/locale`]: c.locale } });
    } catch (err) {
      this.opts.log?.({ server: c.server, err: (err as Error).message }, 'app host: the MCP server did not list its tools');
      throw unreachable(c.server);
    }
    c.tools = r.tools;
    c.templates = r.input.resources ?? {};
    c.findings = sortFindings(r.findings);
  }

  /**
   * A connection by id, or a 404 naming the field. Read from the store at every request: a refresh through
   * another instance changes its tools and templates.
   */
  async get(id: string): Promise<Connection> {
    const row = await store.getConnection(this.opts.db(), id);
    if (!row) throw notFound('connection', id);
    const spec = parseServerSpec(row.server);
    if (spec.kind === 'stdio' && !this.allowedCommands.has(row.server))
      throw new ApiError(
        'permission_error',
        `'connection': it runs a local command that only the instance started with it may run (standin apps open).`,
        { param: 'connection', code: 'command_not_allowed' },
      );
    const state = JSON.parse(row.state) as ConnectionState;
    return { id: row.id, server: row.server, spec, client: await this.client(row, spec), locale: row.locale, ...state };
  }

  /**
   * The tool list the host page shows: each descriptor with who may call it and its template; the findings add what
   * the server's components were seen needing beyond the strict CSP (their violation reports).
   */
  async describe(c: Connection) {
    const needs = cspNeedFindings(await store.cspNeeds(this.opts.db(), c.id));
    return {
      id: c.id,
      server: c.server,
      serverInfo: c.serverInfo,
      tools: c.tools.map((t) => ({
        descriptor: t,
        visibility: visibilityOf(t, this.opts.vendor()),
        templateUri: templateUri(t, this.opts.vendor()) ?? null,
      })),
      findings: needs.length ? sortFindings([...c.findings, ...needs]) : c.findings,
    };
  }

  /**
   * Calls a tool as the model (`caller: 'model'`) or from a component (`caller: 'app'`), refusing what the tool's
   * visibility does not allow, and completing file inputs given by file id into the spec's file objects.
   */
  async callTool(
    connectionId: string,
    name: string,
    args: Record<string, unknown>,
    meta: Record<string, unknown>,
    caller: 'model' | 'app',
  ) {
    const c = await this.get(connectionId);
    const tool = c.tools.find((t) => t.name === name);
    if (!tool) throw invalid(`'name': the server has no tool '${name}'`, 'name');
    const vis = visibilityOf(tool, this.opts.vendor());
    if (caller === 'app' && !vis.app)
      throw new ApiError(
        'permission_error',
        `'name': the tool '${name}' is not callable from the component: its visibility does not include "app"`,
        { param: 'name', code: 'tool_not_visible' },
      );
    if (caller === 'model' && !vis.model)
      throw new ApiError(
        'permission_error',
        `'name': the tool '${name}' is hidden from the model: its visibility does not include "model"`,
        { param: 'name', code: 'tool_not_visible' },
      );
    const resolved = await this.resolveFileParams(tool, args);
    try {
      return await callToolRaw(c.client, name, resolved, meta);
    } catch (err) {
      throw new ApiError('invalid_request_error', `the server failed the call of '${name}': ${(err as Error).message}`, {
        status: 502,
        code: 'tool_call_failed',
      });
    }
  }

  /** Turns `{file_id}` (or `{fileId}`) values of `<vendor>/fileParams` inputs into full file objects with fresh URLs. */
  async resolveFileParams(tool: ToolDescriptor, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const params = tool._meta?.[`${this.opts.vendor()}/fileParams`];
    if (!Array.isArray(params)) return args;
    const out = { ...args };
    const one = async (v: unknown) => {
      if (!isObj(v)) return v;
      const id = v.file_id ?? v.fileId;
      const f = typeof id === 'string' ? await this.files.get(id) : undefined;
      if (!f) return v;
      const { fileId: _drop, ...rest } = v;
      return {
        ...rest,
        file_id: f.fileId,
        download_url: await this.files.downloadUrl(this.opts.publicUrl(), f.fileId),
        mime_type: f.mimeType,
        file_name: f.fileName,
      };
    };
    for (const p of params)
      if (typeof p === 'string' && p in out)
        out[p] = Array.isArray(out[p]) ? await Promise.all((out[p] as unknown[]).map(one)) : await one(out[p]);
    return out;
  }

  /** Proxies `resources/read` for a component (templates and other resources of the same server). */
  async readResource(connectionId: string, uri: string) {
    const c = await this.get(connectionId);
    try {
      return await c.client.readResource({ uri });
    } catch (err) {
      throw new ApiError('not_found_error', `'uri': the server could not read ${uri}: ${(err as Error).message}`, {
        param: 'uri',
        code: 'resource_not_found',
      });
    }
  }

  /** The origin a component renders on: per app under `*.localhost` when `ui.domain` is set and the host is local. */
  originFor(domain: string | null): string {
    const base = this.opts.widgetOrigin();
    if (!domain || !this.opts.loopback) return base;
    const slug = domain
      .replace(/^https?:\/\//, '')
      .replace(/[^a-z0-9]+/gi, '-')
      .replace(/^-|-$/g, '')
      .toLowerCase()
      .slice(0, 50);
    const port = new URL(base).port;
    return `http://${slug || createHash('sha256').update(domain).digest('hex').slice(0, 16)}.localhost:${port}`;
  }

  private toolTemplate(c: Connection, name: string): string {
    const tool = c.tools.find((t) => t.name === name);
    if (!tool) throw invalid(`'tool': the server has no tool '${name}'`, 'tool');
    const uri = templateUri(tool, this.opts.vendor());
    if (!uri) throw invalid(`'tool': '${name}' has no UI template (_meta.ui.resourceUri)`, 'tool');
    return uri;
  }

  /** Starts reading a tool's template now (the host page calls this when the tool call starts). */
  async prefetch(connectionId: string, tool: string): Promise<{ uri: string; origin: string }> {
    const c = await this.get(connectionId);
    const uri = this.toolTemplate(c, tool);
    const now = this.opts.clock.now();
    for (const [k, v] of this.prefetched) if (now - v.at > 30_000) this.prefetched.delete(k);
    const read = readTemplate(c.client, uri);
    this.prefetched.set(`${c.id} ${uri}`, { at: now, read });
    // The origin, from the template as read at connect time: the page warms a renderer for it meanwhile.
    const meta = c.templates[uri]?.contents?.[0]?._meta ?? {};
    return { uri, origin: this.originFor(pickString(meta.ui?.domain, meta[`${this.opts.vendor()}/widgetDomain`])) };
  }

  /** Reads the template, builds its CSP and stores the document the widget origin will serve. */
  async render(req: RenderRequest): Promise<RenderResult> {
    const c = await this.get(req.connection);
    const uri = req.tool !== undefined ? this.toolTemplate(c, req.tool) : req.uri;
    if (!uri) throw invalid("give 'tool' or 'uri'", 'uri');
    // Modal templates must be templates of this server: read through the same connection.
    const key = `${c.id} ${uri}`;
    const pre = this.prefetched.get(key);
    this.prefetched.delete(key);
    const read = pre && this.opts.clock.now() - pre.at <= 30_000 ? await pre.read : await readTemplate(c.client, uri);
    if (read.error || !read.contents?.length)
      throw new ApiError('not_found_error', `'uri': the template ${uri} could not be read: ${read.error ?? 'no contents'}`, {
        param: 'uri',
        code: 'template_not_found',
      });
    const content = read.contents[0];
    const mimeType = String(content.mimeType ?? '').replace(/\s+/g, '');
    if (!UI_MIME_TYPES.includes(mimeType))
      throw invalid(
        `'uri': ${uri} has mimeType ${JSON.stringify(content.mimeType)}; a component must be ${UI_MIME_TYPES.join(' or ')}`,
        'uri',
      );
    const html = typeof content.text === 'string' ? content.text : Buffer.from(content.blob ?? '', 'base64').toString('utf8');
    const meta = isObj(content._meta) ? content._meta : {};
    const v = this.opts.vendor();
    const csp = effectiveCsp(meta, v);
    const domain = pickString(meta.ui?.domain, meta[`${v}/widgetDomain`]);
    const prefersBorder = pickBool(meta.ui?.prefersBorder, meta[`${v}/widgetPrefersBorder`]);
    const description = typeof meta[`${v}/widgetDescription`] === 'string' ? meta[`${v}/widgetDescription`] : null;
    const origin = this.originFor(domain);
    const requested = isObj(meta.ui?.permissions) ? meta.ui.permissions : {};
    const permissions: Record<string, object> = {};
    const allow: string[] = [];
    for (const [key, feature] of [
      ['camera', 'camera'],
      ['microphone', 'microphone'],
      ['geolocation', 'geolocation'],
      ['clipboardWrite', 'clipboard-write'],
    ]) {
      if (isObj(requested[key])) {
        permissions[key] = {};
        allow.push(feature);
      }
    }
    const publicOrigin = new URL(this.opts.publicUrl()).origin;
    const id = randomBytes(12).toString('hex');
    const profile = req.cspProfile ?? this.opts.cspProfile();
    // Violations are reported to the widget listener, which records them against the connection and template.
    const reportUri = `; report-uri ${origin}/_standin/csp-report/${id}`;
    const cspHeader = buildCspHeader(csp, [publicOrigin], profile) + reportUri;
    const cspReportOnly = profile === 'strict' ? '' : buildCspHeader(csp, [publicOrigin], 'strict') + reportUri;
    const doc = injectBridge(html, init0(v, req, publicOrigin), asset('apps/bridge.js').toString('utf8'));
    const now = this.opts.clock.now();
    // In the store, so the widget listener of any instance serves it.
    await store.insertDocument(
      this.opts.db(),
      {
        id,
        html: doc,
        csp: cspHeader,
        csp_report_only: cspReportOnly,
        origin: new URL(origin).host,
        created_at: now,
        connection: c.id,
        uri,
      },
      now - DOC_TTL_MS,
    );
    this.opts.log?.(
      { server: c.server, uri, origin, csp: cspHeader, cspReportOnly, permissions: allow },
      'app host: rendering a component',
    );
    return {
      url: `${origin}/w/${id}`,
      sandboxUrl: `${origin}/_standin/sandbox/${id}`,
      html: doc,
      cspProfile: profile,
      cspReportOnly,
      origin,
      uri,
      mimeType,
      csp,
      cspHeader,
      prefersBorder,
      description,
      domain,
      allow: allow.join('; '),
      permissions,
    };
  }

  /** The document for the widget listener; only on the origin it was rendered for. */
  async doc(id: string, host: string | undefined): Promise<WidgetDoc | undefined> {
    const d = await store.getDocument(this.opts.db(), id);
    return d && host === d.origin
      ? { id: d.id, html: d.html, csp: d.csp, cspReportOnly: d.csp_report_only, origin: d.origin, createdAt: d.created_at }
      : undefined;
  }

  /**
   * Records a CSP violation report (`report-uri` of a document) against the connection and template the document
   * was rendered from. Reports on another origin than the document's, and past a bound per connection, are dropped.
   */
  async recordCspReport(id: string, host: string | undefined, body: unknown): Promise<boolean> {
    const need = needOfReport(body);
    if (!need) return false;
    const d = await store.getDocument(this.opts.db(), id);
    if (!d || host !== d.origin || !d.connection) return false;
    const db = this.opts.db();
    if ((await store.countCspNeeds(db, d.connection)) >= MAX_CSP_NEEDS) return false;
    await store.recordCspNeed(db, {
      connection: d.connection,
      uri: d.uri,
      directive: need.directive,
      source: need.source,
      blocked: need.blocked ? 1 : 0,
      created_at: this.opts.clock.now(),
    });
    return true;
  }

  async close() {
    const clients = [...this.clients.values()];
    this.clients.clear();
    this.byServer.clear();
    for (const p of clients) await p.then((c) => c.close()).catch(() => undefined);
  }
}

/** The most CSP needs recorded per connection: a component can make up any number of violations. */
const MAX_CSP_NEEDS = 200;

/** The bridge's initial state in a document. */
const init0 = (vendor: string, req: RenderRequest, hostOrigin: string) => ({
  vendor,
  widgetSessionId: req.widgetSessionId,
  globals: req.globals,
  hostOrigin,
});

const pickString = (...vs: unknown[]) => (vs.find((x) => typeof x === 'string' && x) as string | undefined) ?? null;
const pickBool = (...vs: unknown[]) => (vs.find((x) => typeof x === 'boolean') as boolean | undefined) ?? null;

/**
 * Puts the bridge first in the document: its initial state as inert JSON, then the bridge script inline (every
 * component CSP Standin builds allows inline scripts, as MCP Apps requires), so `window.<vendor>` is ready before
 * the component's scripts run without one more request.
 */
export function injectBridge(html: string, init: unknown, bridgeJs: string): string {
  const json = JSON.stringify(init)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  const tags = `<script type="application/json" id="__standin_init">${json}</script><script>${bridgeJs.replace(/<\/(script)/gi, '<\\/$1')}</script>`;
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + tags + html.slice(head.index + head[0].length);
  const htmlTag = /<html(\s[^>]*)?>/i.exec(html);
  if (htmlTag)
    return html.slice(0, htmlTag.index + htmlTag[0].length) + `<head>${tags}</head>` + html.slice(htmlTag.index + htmlTag[0].length);
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  if (doctype) return doctype[0] + `<head>${tags}</head>` + html.slice(doctype[0].length);
  return `<!doctype html><head>${tags}</head>${html}`;
}
