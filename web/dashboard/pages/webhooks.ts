import { useState } from 'preact/hooks';
import { api, get } from '../api.js';
import { setQuery, useLocation } from '../router.js';
import { Card, Empty, ErrorLine, Json, Status, html, relative, time, useAction, useData } from '../ui.js';
import { ProjectPicker } from './project-picker.js';

interface Endpoint {
  id: string;
  name: string;
  url: string;
  event_types: string[];
  status: 'enabled' | 'disabled';
  secret_hint: string;
  previous_secret_expires_at: number | null;
  secret?: string;
}
interface Attempt {
  attempt: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  ok: boolean;
  error: string | null;
  response_excerpt: string | null;
  response_truncated: boolean;
}
interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempt_count: number;
  created_at: number;
  next_attempt_at: number | null;
  last_status_code: number | null;
  attempts?: Attempt[];
  event?: unknown;
}

/** Webhook endpoints of a project: create, rotate, enable, delete; deliveries as timelines; test events. */
export function Webhooks() {
  const { query } = useLocation();
  const [project, setProject] = useState(query.get('project') ?? '');
  // A delivery linked from a request's detail opens its endpoint and its attempts.
  const [open, setOpen] = useState<string | null>(query.get('endpoint'));
  const [secret, setSecret] = useState<{ name: string; value: string } | null>(null);
  const base = `projects/${encodeURIComponent(project)}`;
  const endpoints = useData(
    async () => (project ? (await get<{ data: Endpoint[] }>(`${base}/webhook_endpoints?limit=100`)).data : []),
    [project],
  );
  const types = useData(async () => (await get<{ data: { type: string; deprecated: boolean }[] }>('webhook_event_types')).data, []);
  const [msg, run] = useAction();
  const choose = (id: string) => {
    setProject(id);
    setOpen(null);
    setQuery({ project: id });
  };
  const act = (ep: Endpoint, verb: string) =>
    run(async () => {
      const path = `${base}/webhook_endpoints/${ep.id}`;
      if (verb === 'rotate') {
        const r = await api<Endpoint>('POST', `${path}/rotate_secret`, {});
        setSecret({ name: r.name, value: r.secret! });
      } else if (verb === 'delete') {
        if (!confirm(`Delete ${ep.name} and its deliveries?`)) return;
        await api('DELETE', path);
        if (open === ep.id) setOpen(null);
      } else await api('POST', `${path}/${verb}`);
      await endpoints.reload();
    });
  return html`<h1>Webhooks</h1>
    <${ProjectPicker} value=${project} onChange=${choose} />
    ${
      secret
        ? html`<div class="notice" role="status">
            Signing secret of <strong>${secret.name}</strong>, shown once — copy it now: <code data-testid="secret">${secret.value}</code>
            <button type="button" onClick=${() => setSecret(null)}>Done</button>
          </div>`
        : null
    }
    <${ErrorLine} error=${msg || endpoints.error} />
    <${Card} title="Endpoints" id="endpoints-h">
      ${
        endpoints.data?.length
          ? html`<div class="scroll">
              <table class="cards">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>URL</th>
                    <th>Events</th>
                    <th>Status</th>
                    <th>Secret</th>
                    <th><span class="sr">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  ${endpoints.data.map(
                    (e) =>
                      html`<tr class=${open === e.id ? 'sel' : ''}>
                        <td>${e.name}<br /><small class="muted">${e.id}</small></td>
                        <td class="break">${e.url}</td>
                        <td data-label="Events"><small>${e.event_types.join(', ')}</small></td>
                        <td data-label="Status"><span class=${`badge ${e.status === 'enabled' ? 'ok' : ''}`}>${e.status}</span></td>
                        <td>
                          <code>${e.secret_hint}</code
                          >${e.previous_secret_expires_at ? html`<br /><small class="muted">old secret signs until ${time(e.previous_secret_expires_at)}</small>` : null}
                        </td>
                        <td class="buttons">
                          <button type="button" onClick=${() => setOpen(e.id)} aria-label=${`Deliveries of ${e.name}`}>Deliveries</button>
                          <button type="button" onClick=${() => act(e, 'rotate')} aria-label=${`Rotate the secret of ${e.name}`}>
                            Rotate secret
                          </button>
                          <button type="button" onClick=${() => act(e, e.status === 'enabled' ? 'disable' : 'enable')}>
                            ${e.status === 'enabled' ? 'Disable' : 'Enable'}
                          </button>
                          <button type="button" class="danger" onClick=${() => act(e, 'delete')} aria-label=${`Delete ${e.name}`}>
                            Delete
                          </button>
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
          : html`<${Empty}>No endpoints yet.</${Empty}>`
      }
    </${Card}>
    ${
      open && endpoints.data?.find((e) => e.id === open)
        ? html`<${Deliveries}
            key=${open}
            base=${base}
            endpoint=${endpoints.data.find((e) => e.id === open)!}
            types=${types.data ?? []}
            first=${query.get('delivery')}
          />`
        : null
    }
    ${project ? html`<${CreateEndpoint} base=${base} types=${types.data ?? []} onCreated=${(e: Endpoint) => (setSecret({ name: e.name, value: e.secret! }), endpoints.reload())} />` : null}`;
}

function CreateEndpoint({
  base,
  types,
  onCreated,
}: {
  base: string;
  types: { type: string; deprecated: boolean }[];
  onCreated: (e: Endpoint) => void;
}) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [msg, run] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const ep = await api<Endpoint>('POST', `${base}/webhook_endpoints`, { name, url, event_types: chosen });
      setName('');
      setUrl('');
      setChosen([]);
      onCreated(ep);
    });
  };
  const toggle = (t: string) => setChosen(chosen.includes(t) ? chosen.filter((x) => x !== t) : [...chosen, t]);
  return html`<${Card} title="Create an endpoint" id="create-h">
    <form onSubmit=${submit} class="stack">
      <div class="row wrap">
        <label>Name <input name="name" required maxlength="200" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} /></label>
        <label class="grow">URL <input name="url" type="url" required value=${url} onInput=${(e: Event) => setUrl((e.target as HTMLInputElement).value)} /></label>
      </div>
      <fieldset><legend>Event types</legend>
        <div class="types">
          ${types.filter((t) => !t.deprecated).map((t) => html`<label class="check"><input type="checkbox" name="event_types" value=${t.type} checked=${chosen.includes(t.type)} onChange=${() => toggle(t.type)} /> ${t.type}</label>`)}
        </div>
      </fieldset>
      <div><button type="submit" class="primary">Create endpoint</button></div>
    </form>
    <${ErrorLine} error=${msg} />
  </${Card}>`;
}

function Deliveries({
  base,
  endpoint,
  types,
  first,
}: {
  base: string;
  endpoint: Endpoint;
  types: { type: string }[];
  first?: string | null;
}) {
  const list = useData(
    async () => (await get<{ data: Delivery[] }>(`${base}/webhook_endpoints/${endpoint.id}/deliveries?limit=50`)).data,
    [endpoint.id],
    3000,
  );
  const clock = useData(() => get<{ now: number }>('clock'), [], 3000);
  const [type, setType] = useState(types[0]?.type ?? '');
  const [shown, setShown] = useState<string | null>(first ?? null);
  const [msg, run] = useAction();
  const test = () =>
    run(async () => {
      await api('POST', `${base}/webhook_endpoints/${endpoint.id}/test`, { type: type || types[0].type });
      await list.reload();
    });
  return html`<${Card} title=${`Deliveries of ${endpoint.name}`} id="deliveries-h" actions=${html` <label
      >Test event
      <select id="test-type" value=${type} onChange=${(e: Event) => setType((e.target as HTMLSelectElement).value)}>
        ${types.map((t) => html`<option>${t.type}</option>`)}
      </select></label
    >
    <button type="button" onClick=${test}>Send test event</button>`}>
    <${ErrorLine} error=${msg || list.error} />
    ${
      list.data?.length
        ? html`<ol class="deliveries">
            ${list.data.map(
              (d) =>
                html`<li key=${d.id} class=${`delivery ${d.status}`}>
                  <div class="row wrap">
                    <span class=${`badge ${d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'bad' : 'warn'}`}>${d.status}</span>
                    <strong>${d.event_type}</strong>
                    <small class="muted"
                      >${d.id} · ${time(d.created_at)} · ${d.attempt_count} attempt${d.attempt_count === 1 ? '' : 's'}</small
                    >
                    ${d.next_attempt_at && d.status === 'pending' ? html`<small>next retry ${relative(d.next_attempt_at, clock.data?.now ?? d.next_attempt_at)} (${time(d.next_attempt_at)}, Standin clock)</small>` : null}
                    <span class="grow"></span>
                    <button type="button" aria-expanded=${shown === d.id} onClick=${() => setShown(shown === d.id ? null : d.id)}>
                      Attempts
                    </button>
                    <button
                      type="button"
                      onClick=${() => run(async () => (await api('POST', `${base}/webhook_deliveries/${d.id}/resend`), list.reload()))}
                    >
                      Resend
                    </button>
                  </div>
                  ${shown === d.id ? html`<${Attempts} base=${base} id=${d.id} />` : null}
                </li>`,
            )}
          </ol>`
        : html`<${Empty}>No deliveries yet.</${Empty}>`
    }
  </${Card}>`;
}

function Attempts({ base, id }: { base: string; id: string }) {
  const d = useData(() => get<Delivery>(`${base}/webhook_deliveries/${id}`), [id], 3000);
  if (d.error) return html`<${ErrorLine} error=${d.error} />`;
  if (!d.data) return html`<p class="muted">Loading…</p>`;
  return html`<div class="attempts">
    <ol class="timeline" aria-label="Attempts">
      ${d.data.attempts?.map(
        (a) =>
          html`<li class=${a.ok ? 'ok' : 'bad'}>
            <div class="row wrap">
              <strong>#${a.attempt}</strong> <${Status} code=${a.status_code} /> <span>${a.duration_ms} ms</span>
              <small class="muted">${time(a.started_at)}</small>
            </div>
            ${a.error ? html`<p class="error">${a.error}</p>` : null}
            ${a.response_excerpt ? html`<pre class="excerpt">${a.response_excerpt}${a.response_truncated ? ' …' : ''}</pre>` : null}
          </li>`,
      )}
    </ol>
    <details>
      <summary>Event</summary>
      <${Json} value=${d.data.event} />
    </details>
  </div>`;
}
