import { useEffect, useRef, useState } from 'preact/hooks';
import { get, qs } from '../api.js';
import { setQuery, useLocation } from '../router.js';
import type { List, Logged, LoggedDetail, ObjectEvent } from '../../../src/dashboard/wire.js';
import { Empty, ErrorLine, Id, Json, Status, html, time } from '../ui.js';

const PAGE = 200;
const WINDOWS: Record<string, number> = { '5m': 300, '1h': 3600, '24h': 86400 };

/** The request log, live: new rows appear at the top; filters by path, status, key and time. */
export function Requests() {
  const { query, rest } = useLocation();
  const [filters, setFilters] = useState({
    path: query.get('path') ?? '',
    status: query.get('status') ?? '',
    credential_id: query.get('credential_id') ?? '',
    window: query.get('window') ?? '',
  });
  const [rows, setRows] = useState<Logged[]>([]);
  const [error, setError] = useState('');
  const [live, setLive] = useState(true);
  const [openId, setOpenId] = useState<string | null>(rest[0] ?? null);
  const newest = useRef<string | undefined>(undefined);
  const now = useRef(0);

  const params = (extra: Record<string, string | number | undefined>) => {
    const since = filters.window && now.current ? now.current - WINDOWS[filters.window] : undefined;
    return qs({ path: filters.path, status: filters.status, credential_id: filters.credential_id, since, ...extra });
  };

  // A full load when the filters change; then only what is newer than the newest row.
  useEffect(() => {
    setQuery(filters);
    let stop = false;
    const load = async () => {
      try {
        if (filters.window) now.current = (await get<{ now: number }>('clock')).now;
        const r = await get<List<Logged>>(`requests${params({ limit: PAGE })}`);
        if (stop) return;
        newest.current = r.data[0]?.id;
        setRows(r.data);
        setError('');
      } catch (e) {
        setError((e as Error).message);
      }
    };
    void load();
    return () => void (stop = true);
  }, [filters.path, filters.status, filters.credential_id, filters.window]);

  useEffect(() => {
    if (!live) return;
    const t = setInterval(async () => {
      if (document.visibilityState !== 'visible') return;
      try {
        const r = await get<List<Logged>>(`requests${params({ limit: PAGE, after: newest.current })}`);
        if (!r.data.length) return;
        newest.current = r.data[0].id;
        setRows((old) => [...r.data, ...old].slice(0, PAGE));
      } catch (e) {
        setError((e as Error).message);
      }
    }, 2000);
    return () => clearInterval(t);
  }, [live, filters.path, filters.status, filters.credential_id, filters.window]);

  const field = (k: keyof typeof filters) => (e: Event) => setFilters({ ...filters, [k]: (e.target as HTMLInputElement).value });
  return html`<h1>Requests</h1>
    <form class="filters" role="search" aria-label="Filter requests" onSubmit=${(e: Event) => e.preventDefault()}>
      <label>Path <input name="path" value=${filters.path} onInput=${field('path')} placeholder="/v1/threads" /></label>
      <label>Status <input name="status" value=${filters.status} onInput=${field('status')} placeholder="429 or 4xx" size="8" /></label>
      <label
        >Key <input name="credential_id" value=${filters.credential_id} onInput=${field('credential_id')} placeholder="key id"
      /></label>
      <label
        >Time
        <select name="window" value=${filters.window} onChange=${field('window')}>
          <option value="">all</option>
          <option value="5m">last 5 min</option>
          <option value="1h">last hour</option>
          <option value="24h">last day</option>
        </select></label
      >
      <label class="check"
        ><input type="checkbox" checked=${live} onChange=${(e: Event) => setLive((e.target as HTMLInputElement).checked)} /> Live</label
      >
    </form>
    <${ErrorLine} error=${error} />
    <div class=${openId ? 'split open' : 'split'}>
      <div class="scroll list" aria-live="off">
        ${
          rows.length
            ? html`<table class="requests">
                <thead>
                  <tr>
                    <th>Time</th>
                    <th>Method</th>
                    <th>Path</th>
                    <th>Status</th>
                    <th class="num wide">ms</th>
                    <th class="wide">Key</th>
                  </tr>
                </thead>
                <tbody>
                  ${rows.map(
                    (r) =>
                      html`<tr key=${r.id} class=${r.id === openId ? 'sel' : ''} data-id=${r.id}>
                        <td class="nowrap">${time(r.at).split(', ').pop()}</td>
                        <td>${r.method}</td>
                        <td class="path">
                          <button
                            type="button"
                            class="link"
                            title=${r.path}
                            aria-label=${`Open ${r.method} ${r.path}, ${r.status}`}
                            onClick=${() => setOpenId(r.id)}
                          >
                            ${r.path}
                          </button>
                        </td>
                        <td><${Status} code=${r.status} /></td>
                        <td class="num wide">${r.duration_ms}</td>
                        <td class="wide"><small>${r.credential_id ?? '—'}</small></td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
            : html`<${Empty}>No requests match.</${Empty}>`
        }
      </div>
      ${openId ? html`<${Detail} id=${openId} onClose=${() => setOpenId(null)} />` : null}
    </div>`;
}

type Detail = LoggedDetail;

const ID = /^[a-z]+(_[a-z]+)*_[A-Za-z0-9]{6,}$/;

/** The ids of the objects a request made or touched: the object its answer names, and the ids in its path. */
function touched(d: Detail): string[] {
  const body = d.response.body as Record<string, unknown> | null;
  const ids = new Set<string>();
  if (body && typeof body === 'object' && typeof body.id === 'string' && ID.test(body.id)) ids.add(body.id);
  for (const part of d.path.split('?')[0].split('/')) if (ID.test(part)) ids.add(part);
  return [...ids].slice(0, 20);
}

/** The run a request made or touched, as a link to the Runs page (its steps are there). */
function runOf(d: Detail): { id: string; href: string } | null {
  const body = d.response.body as Record<string, unknown> | null;
  if (!body || typeof body !== 'object' || body.object !== 'thread.run' || typeof body.id !== 'string') return null;
  const thread = typeof body.thread_id === 'string' ? body.thread_id : '';
  return { id: body.id, href: `/dashboard/runs${qs({ project: d.project_id, thread, run: body.id })}` };
}

const tone = (status: string) => (status === 'succeeded' ? 'ok' : status === 'failed' ? 'bad' : 'warn');

/** What a request caused: the run, the objects, the events about them (later ones too) and their deliveries. */
function Caused({ d }: { d: Detail }) {
  const ids = touched(d);
  const run = runOf(d);
  const [events, setEvents] = useState<ObjectEvent[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    setEvents(null);
    if (!ids.length) return setEvents([]);
    get<{ data: ObjectEvent[] }>(`events?${ids.map((id) => `object_id=${encodeURIComponent(id)}`).join('&')}&limit=20`).then(
      (r) => setEvents(r.data),
      (e) => setError((e as Error).message),
    );
  }, [d.id]);
  return html`<h3>What it caused</h3>
    ${run ? html`<p>Run <a href=${run.href}>${run.id}</a> <small class="muted">(its steps on the Runs page)</small></p>` : null}
    ${ids.length ? html`<p class="ids">Objects ${ids.map((id) => html` <${Id} id=${id} />`)}</p>` : html`<${Empty}>No object.</${Empty}>`}
    <${ErrorLine} error=${error} />
    ${
      events?.length
        ? html`<ul class="plain caused" aria-label="Events">
            ${events.map(
              (e) =>
                html`<li key=${e.event.id}>
                  <strong>${e.event.type}</strong> <small class="muted">${e.event.id} · ${time(e.event.created_at)}</small>
                  ${
                    e.deliveries.length
                      ? html`<ul class="plain">
                          ${e.deliveries.map(
                            (x) =>
                              html`<li>
                                <span class=${`badge ${tone(x.status)}`}>${x.status}</span>
                                <a href=${`/dashboard/webhooks${qs({ project: e.project_id, endpoint: x.endpoint_id, delivery: x.id })}`}
                                  >${x.id}</a
                                >
                                <small class="muted"
                                  >${`to ${x.endpoint_id} · ${x.attempt_count} attempt${x.attempt_count === 1 ? '' : 's'}${x.last_status_code ? ` · ${x.last_status_code}` : ''}`}</small
                                >
                              </li>`,
                          )}
                        </ul>`
                      : html`<small class="muted"> · no delivery</small>`
                  }
                </li>`,
            )}
          </ul>`
        : events && ids.length
          ? html`<${Empty}>No events about these objects.</${Empty}>`
          : null
    }`;
}

function Detail({ id, onClose }: { id: string; onClose: () => void }) {
  const [d, setD] = useState<Detail | null>(null);
  const [error, setError] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    setD(null);
    get<Detail>(`requests/${encodeURIComponent(id)}`).then(
      (x) => (setD(x), setError('')),
      (e) => setError((e as Error).message),
    );
  }, [id]);
  useEffect(() => heading.current?.focus(), [d]);
  const limits = d
    ? Object.entries(d.response.headers).filter(([k]) => k.startsWith('x-ratelimit-') || k === 'retry-after' || k === 'retry-after-ms')
    : [];
  return html`<aside class="detail card" aria-label="Request detail">
    <header>
      <h2 tabindex="-1" ref=${heading}>${d ? `${d.method} ${d.path}` : 'Request'}</h2>
      <div class="actions"><button type="button" onClick=${onClose} aria-label="Close the request">✕</button></div>
    </header>
    <${ErrorLine} error=${error} />
    ${
      d
        ? html`<p><${Status} code=${d.status} /> ${d.duration_ms} ms · ${time(d.at)} · <${Id} id=${d.id} /></p>
            <p class="muted">
              Key ${d.credential_id ?? '—'}${d.project_id ? ` · project ${d.project_id}` : ''}${d.model ? ` · model ${d.model}` : ''}
            </p>
            <h3>Rate limits</h3>
            ${
              limits.length
                ? html`<dl class="kv">
                    ${limits.map(
                      ([k, v]) =>
                        html`<dt>${k}</dt>
                          <dd>${v}</dd>`,
                    )}
                  </dl>`
                : html`<${Empty}>No rate-limit headers.</${Empty}>`
            }
            <${Caused} d=${d} />
            <details open>
              <summary>Request</summary>
              <dl class="kv">
                ${Object.entries(d.request.headers).map(
                  ([k, v]) =>
                    html`<dt>${k}</dt>
                      <dd>${v}</dd>`,
                )}
              </dl>
              <${Json} value=${d.request.body} />
            </details>
            <details open>
              <summary>Response</summary>
              <dl class="kv">
                ${Object.entries(d.response.headers).map(
                  ([k, v]) =>
                    html`<dt>${k}</dt>
                      <dd>${v}</dd>`,
                )}
              </dl>
              <${Json} value=${d.response.body} />
            </details>`
        : null
    }
  </aside>`;
}
