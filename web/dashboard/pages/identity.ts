import { useState } from 'preact/hooks';
import { get } from '../api.js';
import type { Exchange, List, MtlsRoot, Organization, Provider } from '../../../src/dashboard/wire.js';
import { useLocation } from '../router.js';
import { Card, Empty, ErrorLine, Id, html, time, useData, useReveal } from '../ui.js';

/** Workload identity per organization: providers and their mappings, mTLS roots, and the audit of token exchanges. */
export function Identity() {
  const orgs = useData(() => get<List<Organization>>('organizations'), []);
  const [outcome, setOutcome] = useState('');
  return html`<h1>Identity</h1>
    <${ErrorLine} error=${orgs.error} />
    <label
      >Exchanges
      <select value=${outcome} onChange=${(e: Event) => setOutcome((e.target as HTMLSelectElement).value)}>
        <option value="">all</option>
        <option value="refused">refused</option>
        <option value="issued">issued</option>
      </select></label
    >
    ${orgs.data?.data.map((o) => html`<${Org} key=${o.id} org=${o} outcome=${outcome} />`)}
    <${Exchanges} title="Refused before an organization was known" path="workload_identity/exchanges" outcome=${outcome} />`;
}

function Org({ org, outcome }: { org: Organization; outcome: string }) {
  const providers = useData(() => get<{ data: Provider[] }>(`organizations/${org.id}/identity_providers`), [org.id]);
  const roots = useData(() => get<{ data: MtlsRoot[] }>(`organizations/${org.id}/mtls_roots`), [org.id]);
  return html`<section class="org">
    <h2>${org.name} <code class="muted">${org.id}</code></h2>
    <${ErrorLine} error=${providers.error || roots.error} />
    <div class="grid2">
      <${Card} title="Identity providers" id=${`idp-${org.id}`}>
        ${
          providers.data?.data.length
            ? html`<ul class="plain">
                ${providers.data.data.map(
                  (p) =>
                    html`<li>
                      <strong>${p.name}</strong>
                      <span class="badge">${p.kind}</span> ${p.enabled ? null : html`<span class="badge bad">disabled</span>`} <br /><small
                        class="muted"
                        >${p.issuer ?? p.spiffe_trust_domain ?? ''} · ${p.id}</small
                      >
                      ${p.attribute_condition ? html`<br /><small>condition <code>${p.attribute_condition}</code></small>` : null}
                      <ul>
                        ${p.mappings.map(
                          (m) =>
                            html`<li>
                              <small
                                >${m.name} → ${m.service_account_id} (${m.project_id}) ${m.enabled ? '' : '· disabled'}
                                <code>${JSON.stringify(m.attribute_match)}</code></small
                              >
                            </li>`,
                        )}
                      </ul>
                    </li>`,
                )}
              </ul>`
            : html`<${Empty}>No identity providers.</${Empty}>`
        }
      </${Card}>
      <${Card} title="mTLS roots" id=${`roots-${org.id}`}>
        ${
          roots.data?.data.length
            ? html`<ul class="plain">
                ${roots.data.data.map(
                  (r) =>
                    html`<li>
                      <strong>${r.name}</strong> <span class=${`badge ${r.status === 'active' ? 'ok' : ''}`}>${r.status}</span><br /><small
                        class="muted"
                        >${r.subject} · until ${time(r.not_after)}</small
                      >
                    </li>`,
                )}
              </ul>`
            : html`<${Empty}>No mTLS roots.</${Empty}>`
        }
      </${Card}>
    </div>
    <${Exchanges} title="Token exchanges" path=${`organizations/${org.id}/workload_identity/exchanges`} outcome=${outcome} />
  </section>`;
}

function Exchanges({ title, path, outcome }: { title: string; path: string; outcome: string }) {
  const list = useData(() => get<List<Exchange>>(`${path}?limit=50${outcome ? `&outcome=${outcome}` : ''}`), [path, outcome], 5000);
  const found = useLocation().query.get('exchange');
  useReveal(found, list.data);
  return html`<${Card} title=${title} id=${`ex-${path}`}>
    <${ErrorLine} error=${list.error} />
    ${
      list.data?.data.length
        ? html`<div class="scroll">
            <table class="cards">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Outcome</th>
                  <th>Subject</th>
                  <th>Via</th>
                  <th>Reason</th>
                </tr>
              </thead>
              <tbody>
                ${list.data.data.map(
                  (x) =>
                    html`<tr data-id=${x.id} class=${x.id === found ? 'sel' : ''}>
                      <td class="nowrap">
                        ${time(x.created_at)}<br /><small><${Id} id=${x.id} /></small>
                      </td>
                      <td><span class=${`badge ${x.outcome === 'issued' ? 'ok' : 'bad'}`}>${x.outcome}</span></td>
                      <td class="break">${x.subject ?? '—'}<br /><small class="muted">${x.service_account_id ?? ''}</small></td>
                      <td data-label="Via">${x.via ?? '—'}</td>
                      <td>
                        ${x.outcome === 'refused' ? html`<code>${x.error}</code> ${x.category ? html`<span class="badge">${x.category}</span>` : null}<br /><small>${x.reason}</small>` : html`<small class="muted">${x.mapping_id ?? ''}</small>`}
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<${Empty}>No exchanges.</${Empty}>`
    }
  </${Card}>`;
}
