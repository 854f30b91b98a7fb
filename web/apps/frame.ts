// The one place the component's frame is made and its messages are told apart from any other window's: the
// rest of the page only shows `element`, posts with `post` and asks `isFrom`. The frame is the MCP Apps sandbox
// proxy (sandbox-frame.ts) that web hosts must use.
import type { RenderReply } from '../../src/apps/host/wire.js';
import { recordCspViolation } from './csp-profile.js';
import { SandboxFrame } from './sandbox-frame.js';

export interface ComponentFrame {
  /** The element the page shows (the outer, proxy iframe; the component's inner frame fills it). */
  readonly element: HTMLIFrameElement;
  /** The origin the component runs on. */
  readonly origin: string;
  /** The component's window, once the frame is in the document. */
  window(): Window | null;
  /** Posts a message to the component, on its origin only. */
  post(message: unknown): void;
  /** Whether a `message` event came from the component document this frame rendered. */
  isFrom(ev: MessageEvent): boolean;
}

/**
 * Creates the component's frame of a rendered template (not yet in the document): the MCP Apps sandbox proxy on the
 * component's origin, which loads the document into its inner frame and relays its messages.
 */
export function createFrame(r: RenderReply, o: { title: string; sessionId: string; tool: string }): ComponentFrame {
  const { connectDomains, resourceDomains, frameDomains, baseUriDomains } = r.csp;
  const sandbox = new SandboxFrame({
    proxyUrl: r.sandboxUrl,
    origin: r.origin,
    resource: { html: r.html, csp: { connectDomains, resourceDomains, frameDomains, baseUriDomains }, permissions: r.permissions },
    title: o.title,
    allow: r.allow,
    dataset: { widgetSession: o.sessionId, origin: r.origin, cspProfile: r.cspProfile },
    onViolation: (v) => recordCspViolation(o.tool, r.uri, v),
  });
  const el = sandbox.iframe;
  return {
    element: el,
    origin: r.origin,
    window: () => el.contentWindow,
    post: (message) => sandbox.post(message),
    // Only the document we rendered, on its origin, through its proxy (whose own messages are handled there).
    isFrom: (ev) => sandbox.fromComponent(ev),
  };
}

/**
 * A hidden frame on the component's origin, made while the tool runs: the browser starts that origin's
 * renderer process before the result arrives. Returns the function that removes it.
 */
export function warmFrame(origin: string): () => void {
  const el = document.createElement('iframe');
  el.src = `${origin}/_standin/warm`;
  el.hidden = true;
  el.setAttribute('aria-hidden', 'true');
  el.tabIndex = -1;
  document.body.append(el);
  return () => el.remove();
}
