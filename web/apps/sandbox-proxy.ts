// The sandbox proxy of MCP Apps ("Sandbox proxy", "Reserved Messages (Sandbox Proxy)"), inlined in the page the
// widget listener serves at /_standin/sandbox/<id>. It says `ui/notifications/sandbox-proxy-ready`, loads the HTML
// of `ui/notifications/sandbox-resource-ready` into an inner frame on its own origin (an empty page served with the
// component's CSP header, written into), and relays every other message both ways, MessagePorts
// included (the `window.<vendor>` bridge hands its port over this way). The component's parent is this page, on
// the component's own origin, as in the reference host: frameworks that read their parent window work.

const PREFIX = 'ui/notifications/sandbox-';
const READY = 'ui/notifications/sandbox-proxy-ready';
const RESOURCE = 'ui/notifications/sandbox-resource-ready';
/** Standin's report of a CSP violation in the inner frame, sent on the host's MessagePort (never on the window). */
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

// The component shares this page's origin, so once it runs it can change anything in this window: its globals, the
// prototypes, this document (it can append scripts here). What reports its CSP violations must not depend on any of
// that. So the functions used after the component starts are taken now, before it exists, and the reports go on a
// MessagePort the host sent with the resource, held only in this closure: a script the component adds here can post
// on the window, which the host no longer believes, but cannot reach the port.
const apply = Reflect.apply;
const stopAll = Event.prototype.stopImmediatePropagation;
const portsOf = Object.getOwnPropertyDescriptor(MessageEvent.prototype, 'ports')!.get!;
const postOnPort = MessagePort.prototype.postMessage;
const slice = String.prototype.slice;
const field = (name: string) => Object.getOwnPropertyDescriptor(SecurityPolicyViolationEvent.prototype, name)!.get!;
const violation = {
  effectiveDirective: field('effectiveDirective'),
  blockedURI: field('blockedURI'),
  disposition: field('disposition'),
  sourceFile: field('sourceFile'),
  lineNumber: field('lineNumber'),
  sample: field('sample'),
};
const read = (e: Event, name: keyof typeof violation): unknown => apply(violation[name], e, []);
const cut = (v: unknown, n: number): string => (typeof v === 'string' ? (apply(slice, v, [0, n]) as string) : '');

(() => {
  if (window.parent === window) return;
  const own = location.origin;
  let inner: HTMLIFrameElement | null = null;
  /** The origin of the page that sent the resource: messages go to it only. */
  let hostOrigin: string | null = null;
  /** The host's port for violation reports (sent with the resource, before the component existed). */
  let reports: MessagePort | null = null;

  const reserved = (d: unknown) =>
    typeof d === 'object' &&
    d !== null &&
    typeof (d as { method?: unknown }).method === 'string' &&
    (d as { method: string }).method.startsWith(PREFIX);

  const onViolation = (e: SecurityPolicyViolationEvent) => {
    // Only the browser's own events (isTrusted is the event's own, unforgeable): a component can dispatch
    // look-alikes on its document. The fields are read with this realm's getters taken above, not the event's
    // prototype, which is the component's.
    if (!e.isTrusted || !reports) return;
    const params = {
      effectiveDirective: cut(read(e, 'effectiveDirective'), 100),
      blockedURI: cut(read(e, 'blockedURI'), 500),
      disposition: cut(read(e, 'disposition'), 10),
      sourceFile: cut(read(e, 'sourceFile'), 500),
      lineNumber: Number(read(e, 'lineNumber')),
      sample: cut(read(e, 'sample'), 100),
    };
    apply(postOnPort, reports, [{ jsonrpc: '2.0', method: VIOLATION, params }]);
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

  // First, and capturing: the host's own messages (the resource and its port) reach no listener added later.
  const onMessage = (ev: MessageEvent) => {
    const data = ev.data;
    if (ev.source === parent) {
      if (reserved(data)) {
        apply(stopAll, ev, []);
        const params = (data as { params?: ResourceParams }).params;
        if ((data as { method: string }).method === RESOURCE && !inner && params && typeof params.html === 'string') {
          hostOrigin = ev.origin;
          reports = (apply(portsOf, ev, []) as readonly MessagePort[])[0] ?? null;
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
  };
  addEventListener('message', onMessage, { capture: true });

  // Nothing secret in it: the host answers with the document, and this page then talks to that host only.
  parent.postMessage({ jsonrpc: '2.0', method: READY, params: {} }, '*');
})();
