import { useState } from 'preact/hooks';
import { api, get } from '../api.js';
import type {
  AdAccount as AdAccountRow,
  ApiKey,
  Audience,
  Campaign,
  Clock as ClockView,
  Fault,
  Feed,
  List,
  Logged,
  Organization as Org,
  Project as ProjectRow,
  ServiceAccount,
} from '../../../src/dashboard/wire.js';
import { useLocation } from '../router.js';
import { Card, Empty, ErrorLine, Id, html, relative, time, useAction, useData, useReveal } from '../ui.js';

/** Organizations and what they hold, the clock, and the active faults. */
export function Overview() {
  const orgs = useData(() => get<List<Org>>('organizations'), []);
  return html`<h1>Overview</h1>
    <div class="grid2">
      <${Clock} />
      <${Faults} />
    </div>
    <${ErrorLine} error=${orgs.error} />
    ${orgs.data?.data.map((o) => html`<${Organization} key=${o.id} org=${o} />`)}
    ${orgs.data && !orgs.data.data.length ? html`<${Empty}>No organizations yet (POST /admin/v1/organizations).</${Empty}>` : null}`;
}

function Clock() {
  const clock = useData(() => get<ClockView>('clock'), [], 5000);
  const [duration, setDuration] = useState('1h');
  const [msg, run] = useAction();
  const advance = (e: Event) => {
    e.preventDefault();
    void run(async () => clock.setData(await api<ClockView>('POST', 'clock/advance', { duration })));
  };
  const c = clock.data;
  return html`<${Card} title="Clock" id="clock-h">
    <p class="big" aria-live="polite" data-testid="clock-now">${c ? time(c.now) : '…'}</p>
    <p class="muted">${c ? (c.offset_ms ? `${Math.round(c.offset_ms / 1000)} s ahead of real time` : 'real time') : ''}</p>
    <form class="row" onSubmit=${advance}>
      <label for="advance">Advance by</label>
      <input id="advance" value=${duration} size="8" onInput=${(e: Event) => setDuration((e.target as HTMLInputElement).value)} />
      <button type="submit">Advance</button>
    </form>
    <${ErrorLine} error=${msg || clock.error} />
  </${Card}>`;
}

function Faults() {
  const faults = useData(() => get<List<Fault>>('faults'), [], 5000);
  const [form, setForm] = useState({ path: '/v1/chat/completions', status: '429', count: '1' });
  const [msg, run] = useAction();
  const add = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api('POST', 'faults', { path: form.path, status: Number(form.status), count: Number(form.count) });
      await faults.reload();
    });
  };
  const field = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
  return html`<${Card} title="Faults" id="faults-h">
    ${
      faults.data?.data.length
        ? html`<table>
            <thead>
              <tr>
                <th>Path</th>
                <th>Method</th>
                <th>Status</th>
                <th>Left</th>
                <th><span class="sr">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              ${faults.data.data.map(
                (f) =>
                  html`<tr>
                    <td><code>${f.path}</code></td>
                    <td>${f.method}</td>
                    <td>${f.status ?? `delay ${f.latency_ms} ms`} <span class="muted">${f.type}</span></td>
                    <td>${f.remaining}</td>
                    <td>
                      <button
                        type="button"
                        aria-label=${`Remove fault on ${f.path}`}
                        onClick=${() => run(async () => (await api('DELETE', `faults/${f.id}`), faults.reload()))}
                      >
                        Remove
                      </button>
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : html`<${Empty}>No active faults.</${Empty}>`
    }
    <form class="row wrap" onSubmit=${add} aria-label="Add a fault">
      <label>Path <input value=${form.path} onInput=${field('path')} required /></label>
      <label>Status <select value=${form.status} onChange=${field('status')}><option>429</option><option>503</option><option>500</option></select></label>
      <label>Count <input type="number" min="1" max="100000" value=${form.count} onInput=${field('count')} class="num" /></label>
      <button type="submit">Add fault</button>
    </form>
    <${ErrorLine} error=${msg || faults.error} />
  </${Card}>`;
}

function Organization({ org }: { org: Org }) {
  const projects = useData(() => get<List<ProjectRow>>(`organizations/${org.id}/projects`), [org.id]);
  const ads = useData(() => get<List<AdAccountRow>>(`organizations/${org.id}/ad_accounts`), [org.id]);
  return html`<section class="org">
    <h2>${org.name} <code class="muted">${org.id}</code></h2>
    <${ErrorLine} error=${projects.error || ads.error} />
    ${projects.data?.data.map((p) => html`<${Project} key=${p.id} project=${p} />`)}
    ${ads.data?.data.map((a) => html`<${AdAccount} key=${a.id} account=${a} />`)}
  </section>`;
}

/** A key with its newest request in the log. */
type Key = ApiKey & { last_used: number | null };

function Project({ project }: { project: ProjectRow }) {
  const base = `projects/${project.id}`;
  const found = useLocation().query.get('key');
  const clock = useData(() => get<ClockView>('clock'), []);
  const keys = useData(async () => {
    const list = await get<List<ApiKey>>(`${base}/api_keys`);
    // "Last used" comes from the request log: as far back as it reaches.
    const data: Key[] = await Promise.all(
      list.data.map(async (k) => {
        const r = await get<List<Logged>>(`requests?credential_id=${encodeURIComponent(k.id)}&limit=1`);
        return { ...k, last_used: r.data[0]?.at ?? null };
      }),
    );
    return { ...list, data };
  }, [project.id]);
  useReveal(found, keys.data);
  const accounts = useData(() => get<List<ServiceAccount>>(`${base}/service_accounts`), [project.id]);
  const [msg, run] = useAction();
  const now = clock.data?.now ?? 0;
  return html`<${Card} title=${`Project ${project.name}`} id=${`p-${project.id}`} actions=${html`<a href=${`/dashboard/webhooks?project=${project.id}`}>Webhooks</a> <a href=${`/dashboard/requests?project=${project.id}`}>Requests</a>`}>
    <p class="muted"><${Id} id=${project.id} /></p>
    <h3>API keys</h3>
    ${
      keys.data?.data.length
        ? html`<div class="scroll">
            <table class="cards">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Key</th>
                  <th>Created</th>
                  <th>Last used</th>
                  <th><span class="sr">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                ${keys.data.data.map(
                  (k) =>
                    html`<tr data-id=${k.id} class=${k.id === found ? 'sel' : ''}>
                      <td>
                        ${k.name}${k.service_account_id ? html` <span class="badge">service account</span>` : null}<br /><small
                          class="muted"
                          ><${Id} id=${k.id}
                        /></small>
                      </td>
                      <td data-label="Key"><code>${k.redacted_value}</code></td>
                      <td data-label="Created">${time(k.created_at)}</td>
                      <td data-label="Last used">
                        ${k.last_used ? html`<a href=${`/dashboard/requests?credential_id=${k.id}`}>${relative(k.last_used, now)}</a>` : html`<span class="muted">not in the log</span>`}
                      </td>
                      <td>
                        <button
                          type="button"
                          class="danger"
                          aria-label=${`Revoke key ${k.name}`}
                          onClick=${() =>
                            confirm(`Revoke ${k.name}? Clients using it get 401 at once.`) &&
                            run(async () => (await api('DELETE', `${base}/api_keys/${k.id}`), keys.reload()))}
                        >
                          Revoke
                        </button>
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<${Empty}>No API keys.</${Empty}>`
    }
    <h3>Service accounts</h3>
    ${
      accounts.data?.data.length
        ? html`<ul class="plain">
            ${accounts.data.data.map((a) => html`<li>${a.name} <span class="badge">${a.role}</span> <small class="muted">${a.id}</small></li>`)}
          </ul>`
        : html`<${Empty}>No service accounts.</${Empty}>`
    }
    <${ErrorLine} error=${msg || keys.error || accounts.error} />
  </${Card}>`;
}

function AdAccount({ account }: { account: AdAccountRow }) {
  const base = `ad_accounts/${account.id}`;
  const data = useData(async () => {
    const [c, a, f] = await Promise.all([
      get<List<Campaign>>(`${base}/campaigns`),
      get<List<Audience>>(`${base}/custom_audiences`),
      get<List<Feed>>(`${base}/product_feeds`),
    ]);
    return { campaigns: c.data, audiences: a.data, feeds: f.data };
  }, [account.id]);
  const d = data.data;
  return html`<${Card} title=${`Ad account ${account.name}`} id=${`a-${account.id}`}>
    <p class="muted"><code>${account.id}</code> · ${account.currency}</p>
    <div class="grid3">
      <div><h3>Campaigns</h3>${
        d?.campaigns.length
          ? html`<ul class="plain">
              ${d.campaigns.map((c) => html`<li>${c.name} <span class="badge">${c.bidding_type}</span></li>`)}
            </ul>`
          : html`<${Empty}>None.</${Empty}>`
      }</div>
      <div><h3>Audiences</h3>${
        d?.audiences.length
          ? html`<ul class="plain">
              ${d.audiences.map((a) => html`<li>${a.name} <span class="badge">${a.status}</span> <small class="muted">${a.matched_count_range ?? ''}</small></li>`)}
            </ul>`
          : html`<${Empty}>None.</${Empty}>`
      }</div>
      <div><h3>Product feeds</h3>${
        d?.feeds.length
          ? html`<ul class="plain">
              ${d.feeds.map((f) => html`<li>${f.name} <small class="muted">${f.id}</small></li>`)}
            </ul>`
          : html`<${Empty}>None.</${Empty}>`
      }</div>
    </div>
    <${ErrorLine} error=${data.error} />
  </${Card}>`;
}
