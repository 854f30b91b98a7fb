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

/** A CSP violation in the component's frame, as the proxy reports it. */
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

  constructor(private readonly o: SandboxFrameOptions) {
    const f = document.createElement('iframe');
    f.src = o.proxyUrl;
    f.title = o.title;
    f.setAttribute('sandbox', SANDBOX_FLAGS);
    if (o.allow) f.setAttribute('allow', o.allow);
    f.referrerPolicy = 'no-referrer';
    Object.assign(f.dataset, o.dataset ?? {});
    this.iframe = f;
  }

  private fromProxy(ev: MessageEvent) {
    return ev.source !== null && ev.source === this.iframe.contentWindow && ev.origin === this.o.origin;
  }

  /** Handles the proxy's own messages: the handshake (the document is sent once) and violation reports. */
  private handle(ev: MessageEvent) {
    const m = method(ev.data);
    if (m === READY && !this.sent) {
      // Sent once: a second "ready" would mean the proxy page reloaded, and its component with it.
      this.sent = true;
      this.iframe.contentWindow?.postMessage(
        { jsonrpc: '2.0', method: RESOURCE, params: { sandbox: SANDBOX_FLAGS, ...this.o.resource } },
        this.o.origin,
      );
    } else if (m === VIOLATION) {
      const p = (ev.data as { params?: SandboxViolation }).params;
      if (p && typeof p.effectiveDirective === 'string') this.o.onViolation?.(p);
    }
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
