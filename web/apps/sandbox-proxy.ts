// The sandbox proxy of MCP Apps ("Sandbox proxy", "Reserved Messages (Sandbox Proxy)"), inlined in the page the
// widget listener serves at /_standin/sandbox/<id>. It says `ui/notifications/sandbox-proxy-ready`, loads the HTML
// of `ui/notifications/sandbox-resource-ready` into an inner frame on its own origin (an empty page served with the
// component's CSP header, written into), and relays every other message both ways, MessagePorts
// included (the `window.<vendor>` bridge hands its port over this way). The component's parent is this page, on
// the component's own origin, as in the reference host: frameworks that read their parent window work.

const PREFIX = 'ui/notifications/sandbox-';
const READY = 'ui/notifications/sandbox-proxy-ready';
const RESOURCE = 'ui/notifications/sandbox-resource-ready';
/** Standin's report of a CSP violation in the inner frame (reserved prefix: a component cannot send it). */
const VIOLATION = 'ui/notifications/sandbox-csp-violation';
/** `permissions` of the resource → the inner frame's `allow` features. */
const FEATURES: Record<string, string> = {
  camera: 'camera',
  microphone: 'microphone',
  geolocation: 'geolocation',
  clipboardWrite: 'clipboard-write',
};

interface ResourceParams {
  html: string;
  sandbox?: string;
  permissions?: Record<string, unknown>;
}

(() => {
  if (window.parent === window) return;
  const own = location.origin;
  let inner: HTMLIFrameElement | null = null;
  /** The origin of the page that sent the resource: messages go to it only. */
  let hostOrigin: string | null = null;

  const reserved = (d: unknown) =>
    typeof d === 'object' &&
    d !== null &&
    typeof (d as { method?: unknown }).method === 'string' &&
    (d as { method: string }).method.startsWith(PREFIX);

  const onViolation = (e: SecurityPolicyViolationEvent) => {
    // Only the browser's own events: a component can dispatch look-alikes on its document.
    if (!e.isTrusted || !hostOrigin) return;
    parent.postMessage(
      {
        jsonrpc: '2.0',
        method: VIOLATION,
        params: {
          effectiveDirective: e.effectiveDirective,
          blockedURI: e.blockedURI.slice(0, 500),
          disposition: e.disposition,
          sourceFile: e.sourceFile.slice(0, 500),
          lineNumber: e.lineNumber,
          sample: e.sample.slice(0, 100),
        },
      },
      hostOrigin,
    );
  };

  const load = (p: ResourceParams) => {
    const frame = document.createElement('iframe');
    // The sandbox flags and the allow list take effect only for a frame created with them: set both first.
    frame.setAttribute('sandbox', typeof p.sandbox === 'string' ? p.sandbox : 'allow-scripts allow-same-origin allow-forms');
    const allow = Object.keys(p.permissions ?? {})
      .map((k) => FEATURES[k])
      .filter(Boolean)
      .join('; ');
    if (allow) frame.setAttribute('allow', allow);
    frame.title = 'Component';
    // An empty page of this origin served with the same CSP headers, rather than the frame's initial about:blank,
    // where browsers turn pushState into replaceState and keep the Navigation API off (routers need both).
    frame.src = `${location.pathname}/frame`;
    frame.addEventListener(
      'load',
      () => {
        const doc = frame.contentDocument;
        // A sandbox without allow-same-origin makes the frame opaque: nothing is loaded rather than a document
        // without its CSP.
        if (!doc) return console.error('sandbox proxy: the inner frame needs allow-same-origin');
        // document.write, not srcdoc: the document keeps this origin and the CSP, and WebGL canvases update (the
        // reference host does the same). Listeners added after open() survive it.
        doc.open();
        doc.addEventListener('securitypolicyviolation', onViolation);
        doc.write(p.html);
        doc.close();
      },
      { once: true },
    );
    document.body.append(frame);
    inner = frame;
  };

  addEventListener('message', (ev: MessageEvent) => {
    const data = ev.data;
    if (ev.source === parent) {
      if (reserved(data)) {
        const params = (data as { params?: ResourceParams }).params;
        if ((data as { method: string }).method === RESOURCE && !inner && params && typeof params.html === 'string') {
          hostOrigin = ev.origin;
          load(params);
        }
        return;
      }
      if (ev.origin !== hostOrigin || !inner?.contentWindow) return;
      inner.contentWindow.postMessage(data, own, [...ev.ports]);
    } else if (inner && ev.source === inner.contentWindow) {
      if (!hostOrigin || ev.origin !== own || reserved(data)) return;
      parent.postMessage(data, hostOrigin, [...ev.ports]);
    }
  });

  // Nothing secret in it: the host answers with the document, and this page then talks to that host only.
  parent.postMessage({ jsonrpc: '2.0', method: READY, params: {} }, '*');
})();
