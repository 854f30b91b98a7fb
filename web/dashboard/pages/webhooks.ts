import { useState } from 'preact/hooks';
import { api, get, qs } from '../api.js';
import { setQuery, useLocation } from '../router.js';
import type { Clock, Delivery, Endpoint, EventType, List, ObjectEvent } from '../../../src/dashboard/wire.js';
import { navigate } from '../router.js';
import { Card, Empty, ErrorLine, Id, Json, Status, html, relative, time, useAction, useData, useReveal } from '../ui.js';
import { ProjectPicker } from './project-picker.js';

/** "1 attempt", "3 attempts" (one string: htm drops the space a line break leaves between an expression and text). */
const attempts = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`;

/** An endpoint as created or rotated: its secret, shown once. */
type Created = Endpoint & { secret?: string };

/** Webhook endpoints of a project: create, rotate, enable, delete; deliveries as timelines; test events. */
export function Webhooks() {
  const { query } = useLocation();
  const [project, setProject] = useState(query.get('project') ?? '');
  // A delivery linked from a request's detail opens its endpoint and its attempts.
  const [open, setOpen] = useState<string | null>(query.get('endpoint'));
  const [secret, setSecret] = useState<{ name: string; value: string } | null>(null);
  const base = `projects/${encodeURIComponent(project)}`;
  const endpoints = useData(
    async () => (project ? (await get<List<Endpoint>>(`${base}/webhook_endpoints?limit=100`)).data : []),
    [project],
  );
  const types = useData(async () => (await get<{ data: EventType[] }>('webhook_event_types')).data, []);
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
        const r = await api<Created>('POST', `${path}/rotate_secret`, {});
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
    ${query.get('event') && project ? html`<${EventCard} id=${query.get('event')} project=${project} />` : null}
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
                        <td>
                          ${e.name}<br /><small class="muted"><${Id} id=${e.id} /></small>
                        </td>
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
    ${project ? html`<${CreateEndpoint} base=${base} types=${types.data ?? []} onCreated=${(e: Created) => (setSecret({ name: e.name, value: e.secret! }), endpoints.reload())} />` : null}`;
}

function CreateEndpoint({ base, types, onCreated }: { base: string; types: EventType[]; onCreated: (e: Created) => void }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [msg, run] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const ep = await api<Created>('POST', `${base}/webhook_endpoints`, { name, url, event_types: chosen });
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

function Deliveries({ base, endpoint, types, first }: { base: string; endpoint: Endpoint; types: EventType[]; first?: string | null }) {
  const list = useData(
    async () => (await get<List<Delivery>>(`${base}/webhook_endpoints/${endpoint.id}/deliveries?limit=50`)).data,
    [endpoint.id],
    3000,
  );
  const clock = useData(() => get<Clock>('clock'), [], 3000);
  useReveal(first, list.data);
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
      first && list.data && !list.data.some((d) => d.id === first)
        ? html`<div class="sel" data-id=${first}>
            <p>Delivery <${Id} id=${first} /> <span class="muted">(older than the newest 50 below)</span></p>
            <${Attempts} base=${base} id=${first} />
          </div>`
        : null
    }
    ${
      list.data?.length
        ? html`<ol class="deliveries">
            ${list.data.map(
              (d) =>
                html`<li key=${d.id} data-id=${d.id} class=${`delivery ${d.status}${d.id === first ? ' sel' : ''}`}>
                  <div class="row wrap">
                    <span class=${`badge ${d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'bad' : 'warn'}`}>${d.status}</span>
                    <strong>${d.event_type}</strong>
                    <small>event <${Id} id=${d.event_id} /> <span class="muted">(its webhook-id)</span></small>
                    <small class="muted">delivery <${Id} id=${d.id} /> · ${time(d.created_at)} · ${attempts(d.attempt_count)}</small>
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

/** One event by its id (a receiver's webhook-id): its type, payload and every delivery of it. */
function EventCard({ id, project }: { id: string; project: string }) {
  const e = useData(() => get<ObjectEvent>(`events/${encodeURIComponent(id)}`), [id]);
  const d = e.data;
  return html`<${Card} title="Event" id="event-h">
    <${ErrorLine} error=${e.error} />
    ${
      d
        ? html`<p class="row wrap">
              <strong>${d.event.type}</strong> <${Id} id=${d.event.id} /> <small class="muted">${time(d.event.created_at)}</small>
            </p>
            ${
              d.deliveries.length
                ? html`<ul class="plain" aria-label="Deliveries of the event">
                    ${d.deliveries.map(
                      (x) =>
                        html`<li>
                          <span class=${`badge ${x.status === 'succeeded' ? 'ok' : x.status === 'failed' ? 'bad' : 'warn'}`}
                            >${x.status}</span
                          >
                          <${Id} id=${x.id} />
                          <small class="muted">to ${x.endpoint_id} · ${attempts(x.attempt_count)}</small>
                          <button
                            type="button"
                            onClick=${() => navigate(`/dashboard/webhooks${qs({ project, endpoint: x.endpoint_id, delivery: x.id })}`)}
                          >
                            Open delivery
                          </button>
                        </li>`,
                    )}
                  </ul>`
                : html`<${Empty}>No endpoint was subscribed to ${d.event.type} when it happened: no deliveries.</${Empty}>`
            }
            <details>
              <summary>Payload</summary>
              <${Json} value=${d.event} />
            </details>`
        : null
    }
  </${Card}>`;
}

function Attempts({ base, id }: { base: string; id: string }) {
  const d = useData(() => get<Delivery>(`${base}/webhook_deliveries/${encodeURIComponent(id)}`), [id], 3000);
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
