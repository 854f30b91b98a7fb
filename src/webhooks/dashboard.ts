import { DEPRECATED_EVENT_TYPE, EVENT_TYPES } from './catalog.js';

/**
 * The project settings page for webhooks: plain HTML and a little JS that calls the admin API with the
 * admin key the user types in (kept in sessionStorage, sent as a bearer). No build step, no framework.
 */
export function dashboardPage(projectId: string): string {
  const data = JSON.stringify({ projectId, types: EVENT_TYPES, deprecated: DEPRECATED_EVENT_TYPE }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Webhooks · Standin</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px system-ui,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#111}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
code,pre{background:#f4f4f4;padding:.1rem .3rem;border-radius:3px}pre{white-space:pre-wrap;max-height:12rem;overflow:auto}
.secret{background:#fff6d6;border:1px solid #e5c200;padding:.6rem;margin:1rem 0}.error{color:#b00020}
button{margin:0 .2rem .2rem 0}fieldset{border:1px solid #ddd}label.t{display:inline-block;width:16rem}
.ok{color:#08660d}.bad{color:#b00020}
</style></head><body>
<h1>Project settings · Webhooks <small id="project"></small></h1>
<p><label>Admin key <input id="key" type="password" size="40" autocomplete="off"></label> <button id="save-key">Use key</button>
<span id="msg" class="error" role="alert"></span></p>
<div id="secret" class="secret" hidden></div>
<h2>Endpoints</h2>
<table><thead><tr><th>Name</th><th>URL</th><th>Events</th><th>Status</th><th>Secret</th><th></th></tr></thead><tbody id="endpoints"></tbody></table>
<h2>Create endpoint</h2>
<form id="create"><p><label>Name <input name="name" required maxlength="200"></label>
<label>URL <input name="url" type="url" required size="50"></label></p>
<fieldset><legend>Event types</legend><div id="types"></div></fieldset>
<p><button type="submit">Create</button></p></form>
<section id="detail" hidden><h2 id="detail-title"></h2>
<p><label>Test event <select id="test-type"></select></label> <button id="send-test">Send test event</button></p>
<table><thead><tr><th>Delivery</th><th>Event</th><th>Status</th><th>Attempts</th><th>Last</th><th></th></tr></thead><tbody id="deliveries"></tbody></table>
<div id="attempts"></div></section>
<script>
const cfg = ${data};
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]));
const base = '/admin/v1/projects/' + encodeURIComponent(cfg.projectId);
let current = null;
$('project').textContent = cfg.projectId;
$('key').value = sessionStorage.getItem('standinAdminKey') || '';
async function api(method, path, body) {
  const res = await fetch(path, { method, headers: { authorization: 'Bearer ' + $('key').value, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(json.error ? json.error.message : res.status + ' ' + res.statusText);
  return json;
}
function run(fn) { return async (...a) => { $('msg').textContent = ''; try { await fn(...a); } catch (e) { $('msg').textContent = e.message; } }; }
function showSecret(ep) {
  $('secret').hidden = false;
  $('secret').innerHTML = 'Signing secret of <b>' + esc(ep.name) + '</b> — shown once, copy it now: <code id="secret-value">' + esc(ep.secret) + '</code>';
}
const load = run(async () => {
  const { data } = await api('GET', base + '/webhook_endpoints');
  $('endpoints').innerHTML = data.map((e) => '<tr data-id="' + esc(e.id) + '"><td>' + esc(e.name) + '<br><small>' + esc(e.id) + '</small></td><td>' + esc(e.url) +
    '</td><td>' + e.event_types.map(esc).join('<br>') + '</td><td>' + esc(e.status) + '</td><td><code>' + esc(e.secret_hint) + '</code>' +
    (e.previous_secret_expires_at ? '<br><small>old secret signs until ' + new Date(e.previous_secret_expires_at * 1000).toISOString() + '</small>' : '') +
    '</td><td><button data-act="open">Deliveries</button><button data-act="rotate">Rotate secret</button><button data-act="' + (e.status === 'enabled' ? 'disable' : 'enable') + '">' +
    (e.status === 'enabled' ? 'Disable' : 'Enable') + '</button><button data-act="delete">Delete</button></td></tr>').join('') || '<tr><td colspan="6">No endpoints yet.</td></tr>';
});
$('endpoints').addEventListener('click', run(async (ev) => {
  const act = ev.target.dataset && ev.target.dataset.act; if (!act) return;
  const id = ev.target.closest('tr').dataset.id; const path = base + '/webhook_endpoints/' + encodeURIComponent(id);
  if (act === 'open') { current = id; $('detail').hidden = false; $('detail-title').textContent = 'Deliveries of ' + id; await deliveries(); return; }
  if (act === 'rotate') showSecret(await api('POST', path + '/rotate_secret', {}));
  if (act === 'enable' || act === 'disable') await api('POST', path + '/' + act);
  if (act === 'delete') { if (!confirm('Delete ' + id + ' and its deliveries?')) return; await api('DELETE', path); if (current === id) $('detail').hidden = true; }
  await load();
}));
$('types').innerHTML = cfg.types.filter((t) => t !== cfg.deprecated).map((t) => '<label class="t"><input type="checkbox" name="event_types" value="' + t + '"> ' + t + '</label>').join('');
$('test-type').innerHTML = cfg.types.map((t) => '<option>' + t + '</option>').join('');
$('create').addEventListener('submit', run(async (ev) => {
  ev.preventDefault(); const f = new FormData(ev.target);
  const ep = await api('POST', base + '/webhook_endpoints', { name: f.get('name'), url: f.get('url'), event_types: f.getAll('event_types') });
  showSecret(ep); ev.target.reset(); await load();
}));
async function deliveries() {
  const { data } = await api('GET', base + '/webhook_endpoints/' + encodeURIComponent(current) + '/deliveries?limit=50');
  $('deliveries').innerHTML = data.map((d) => '<tr data-id="' + esc(d.id) + '"><td>' + esc(d.id) + '</td><td>' + esc(d.event_type) + '<br><small>' + esc(d.event_id) + '</small></td><td class="' +
    (d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'bad' : '') + '">' + esc(d.status) + '</td><td>' + d.attempt_count + '</td><td>' + esc(d.last_status_code ?? '') +
    '</td><td><button data-act="attempts">Attempts</button><button data-act="resend">Resend</button></td></tr>').join('') || '<tr><td colspan="6">No deliveries yet.</td></tr>';
}
$('deliveries').addEventListener('click', run(async (ev) => {
  const act = ev.target.dataset && ev.target.dataset.act; if (!act) return;
  const id = ev.target.closest('tr').dataset.id;
  if (act === 'resend') { await api('POST', base + '/webhook_deliveries/' + encodeURIComponent(id) + '/resend'); await deliveries(); return; }
  const d = await api('GET', base + '/webhook_deliveries/' + encodeURIComponent(id));
  $('attempts').innerHTML = '<h3>Attempts of ' + esc(d.id) + '</h3><table><thead><tr><th>#</th><th>Status</th><th>Duration</th><th>Error</th><th>Response</th></tr></thead><tbody>' +
    d.attempts.map((a) => '<tr><td>' + a.attempt + '</td><td class="' + (a.ok ? 'ok' : 'bad') + '">' + esc(a.status_code ?? '—') + '</td><td>' + a.duration_ms + ' ms</td><td>' + esc(a.error ?? '') +
    '</td><td><pre>' + esc(a.response_excerpt ?? '') + (a.response_truncated ? ' …' : '') + '</pre></td></tr>').join('') + '</tbody></table><h3>Event</h3><pre>' + esc(JSON.stringify(d.event, null, 2)) + '</pre>';
}));
$('send-test').addEventListener('click', run(async () => {
  await api('POST', base + '/webhook_endpoints/' + encodeURIComponent(current) + '/test', { type: $('test-type').value });
  setTimeout(run(deliveries), 300);
}));
$('save-key').addEventListener('click', () => { sessionStorage.setItem('standinAdminKey', $('key').value); load(); });
if ($('key').value) load();
</script></body></html>`;
}
