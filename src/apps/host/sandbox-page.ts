import { asset } from './assets.js';

/**
 * The sandbox proxy page of MCP Apps ("Sandbox proxy"): an intermediate frame on the widget origin that tells the
 * host `ui/notifications/sandbox-proxy-ready`, takes the document from `ui/notifications/sandbox-resource-ready`,
 * loads it into an inner frame on the same origin and relays messages both ways. The page is served with the
 * component's CSP header, which the inner frame inherits; its script is inlined (every component CSP allows inline
 * scripts), so it costs no second request.
 */
export function sandboxPage(): string {
  const js = asset('apps/sandbox-proxy.js')
    .toString('utf8')
    .replace(/<\/(script)/gi, '<\\/$1');
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>sandbox</title>
<style>html,body{margin:0;padding:0;height:100%;overflow:hidden;background:transparent}iframe{display:block;border:0;width:100%;height:100%}</style>
</head><body><script>${js}</script></body></html>`;
}
