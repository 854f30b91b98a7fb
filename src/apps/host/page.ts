/**
 * The host page shell; the UI is built by /apps/assets/host.js. `needsKey`: the API asks for the admin key;
 * `cspProfile`: the components' CSP profile unless the page's control chooses another.
 */
export function hostPage(vendor: string, needsKey = false, cspProfile = 'strict'): string {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Standin app host</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/apps/assets/host.css">
<script type="module" src="/apps/assets/host.js"></script>
</head>
<body data-vendor="${esc(vendor)}" data-csp-profile="${esc(cspProfile)}"${needsKey ? ' data-needs-key="true"' : ''}>
<div id="app" aria-busy="true">Loading the app host…</div>
</body>
</html>`;
}
