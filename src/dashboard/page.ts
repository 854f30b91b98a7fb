/** The dashboard's HTML shell: the app bundle renders everything; the page itself holds no data. */
export function shellPage(version: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Standin dashboard</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="stylesheet" href="/dashboard/assets/app.css?v=${version}">
<script type="module" src="/dashboard/assets/app.js?v=${version}"></script>
</head><body><div id="app"><p class="boot">Loading the dashboard…</p></div></body></html>`;
}

/** The page's Content-Security-Policy: its own scripts and styles only, and calls to its own origin. */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
