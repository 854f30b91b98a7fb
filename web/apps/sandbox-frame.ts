// The host's side of the MCP Apps sandbox proxy: the outer frame on the widget origin, the
// `ui/notifications/sandbox-proxy-ready` → `ui/notifications/sandbox-resource-ready` handshake, and the one window
// whose messages count as the component's (the proxy relays the inner frame's messages, MessagePorts included).
// The proxy's own messages (the reserved `ui/notifications/sandbox-` prefix) stay here and never reach the
// component's handlers.

const PREFIX = 'ui/notifications/sandbox-';
const READY = 'ui/notifications/sandbox-proxy-ready';
const RESOURCE = 'ui/notifications/sandbox-resource-ready';
const VIOLATION = 'ui/notifications/sandbox-csp-violation';

/** The sandbox flags of both frames (the inner frame's are bounded by the outer's). */
export const SANDBOX_FLAGS = 'allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox';

/** The `params` of `ui/notifications/sandbox-resource-ready`. */
export interface SandboxResource {
  html: string;
  sandbox?: string;
  csp?: { connectDomains?: string[]; resourceDomains?: string[]; frameDomains?: string[]; baseUriDomains?: string[] };
  permissions?: Record<string, object>;
}

/** A CSP violation in the component's frame, as the proxy reports it on the host's port. */
export interface SandboxViolation {
  effectiveDirective: string;
  blockedURI: string;
  /** `enforce`: the policy in force refused it; `report`: only the strict policy sent report-only would. */
  disposition: 'enforce' | 'report';
  sourceFile: string;
  lineNumber: number;
  /** The start of the refused code (the CSP asks for `'report-sample'`). */
  sample?: string;
}

export interface SandboxFrameOptions {
  /** The proxy page (`/_standin/sandbox/<id>` on the component's origin). */
  proxyUrl: string;
  origin: string;
  resource: SandboxResource;
  title: string;
  /** The outer frame's `allow` (the inner frame's is set by the proxy from `resource.permissions`). */
  allow: string;
  dataset?: Record<string, string>;
  onViolation?: (v: SandboxViolation) => void;
}

const method = (d: unknown): string | undefined =>
  typeof d === 'object' && d !== null && typeof (d as { method?: unknown }).method === 'string'
    ? (d as { method: string }).method
    : undefined;

/** The component's frame: an outer sandbox proxy frame that loads the component into its inner frame. */
export class SandboxFrame {
  /** The outer frame (the one the page lays out and sizes; the inner one fills it). */
  readonly iframe: HTMLIFrameElement;
  private sent = false;
  /**
   * Violation reports come on this channel only: its far port goes to the proxy with the resource, before the
   * component exists. The component shares the proxy's origin and can post on its window as the proxy would, so
   * nothing posted there is taken for a report.
   */
  private readonly reports = new MessageChannel();

  constructor(private readonly o: SandboxFrameOptions) {
    const f = document.createElement('iframe');
    f.src = o.proxyUrl;
    f.title = o.title;
    f.setAttribute('sandbox', SANDBOX_FLAGS);
    if (o.allow) f.setAttribute('allow', o.allow);
    f.referrerPolicy = 'no-referrer';
    Object.assign(f.dataset, o.dataset ?? {});
    this.iframe = f;
    this.reports.port1.onmessage = (ev) => {
      const v = violationOf(ev.data);
      if (v) this.o.onViolation?.(v);
    };
  }

  private fromProxy(ev: MessageEvent) {
    return ev.source !== null && ev.source === this.iframe.contentWindow && ev.origin === this.o.origin;
  }

  /** Handles the proxy's own messages on the window: the handshake (the document and the report port are sent once). */
  private handle(ev: MessageEvent) {
    if (method(ev.data) !== READY || this.sent) return;
    // Sent once: a second "ready" would mean the proxy page reloaded (or the component navigated it).
    this.sent = true;
    this.iframe.contentWindow?.postMessage(
      { jsonrpc: '2.0', method: RESOURCE, params: { sandbox: SANDBOX_FLAGS, ...this.o.resource } },
      this.o.origin,
      [this.reports.port2],
    );
  }

  /**
   * True for a message of the component (relayed by the proxy); false for anyone else's, and for the proxy's own,
   * which are handled here. The page's `message` listener asks this of every message.
   */
  fromComponent(ev: MessageEvent): boolean {
    if (!this.fromProxy(ev)) return false;
    if (!method(ev.data)?.startsWith(PREFIX)) return true;
    this.handle(ev);
    return false;
  }

  /** Posts to the component (the proxy relays it to the inner frame). */
  post(m: unknown) {
    this.iframe.contentWindow?.postMessage(m, this.o.origin);
  }
}

/** The violation a report on the port carries, when it has the shape the proxy sends; else undefined. */
function violationOf(data: unknown): SandboxViolation | undefined {
  if (method(data) !== VIOLATION) return undefined;
  const p = (data as { params?: Record<string, unknown> }).params;
  if (typeof p !== 'object' || p === null) return undefined;
  const { effectiveDirective: d, blockedURI: b, disposition, sourceFile, lineNumber, sample } = p;
  if (
    typeof d !== 'string' ||
    !/^[a-z-]{1,40}$/.test(d) ||
    typeof b !== 'string' ||
    (disposition !== 'enforce' && disposition !== 'report')
  )
    return undefined;
  return {
    effectiveDirective: d,
    blockedURI: b.slice(0, 500),
    disposition,
    sourceFile: typeof sourceFile === 'string' ? sourceFile.slice(0, 500) : '',
    lineNumber: typeof lineNumber === 'number' ? lineNumber : 0,
    sample: typeof sample === 'string' ? sample.slice(0, 100) : '',
  };
}
