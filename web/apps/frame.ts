// The one place the component's frame is made and its messages are told apart from any other window's: the
// rest of the page only shows `element`, posts with `post` and asks `isFrom`. (A sandbox-proxy frame, as the
// MCP Apps spec describes for web hosts, changes this file only.)
import type { RenderReply } from '../../src/apps/host/wire.js';

export interface ComponentFrame {
  /** The element the page shows (the iframe). */
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

/** Creates the sandboxed frame of a rendered template (not yet in the document). */
export function createFrame(r: RenderReply, o: { title: string; sessionId: string }): ComponentFrame {
  const el = document.createElement('iframe');
  el.src = r.url;
  el.title = o.title;
  el.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox');
  if (r.allow) el.setAttribute('allow', r.allow);
  el.setAttribute('referrerpolicy', 'no-referrer');
  el.dataset.widgetSession = o.sessionId;
  el.dataset.origin = r.origin;
  return {
    element: el,
    origin: r.origin,
    window: () => el.contentWindow,
    post: (message) => el.contentWindow?.postMessage(message, r.origin),
    // Only the document we rendered, on its origin.
    isFrom: (ev) => ev.source !== null && ev.source === el.contentWindow && ev.origin === r.origin,
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
