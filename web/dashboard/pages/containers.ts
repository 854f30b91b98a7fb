import { useEffect, useState } from 'preact/hooks';
import { download, get, qs } from '../api.js';
import { setQuery, useLocation } from '../router.js';
import type { Container, ContainerFile, List } from '../../../src/dashboard/wire.js';
import { Card, Empty, ErrorLine, Id, html, time, useData, useReveal } from '../ui.js';
import { ProjectPicker } from './project-picker.js';

const SHOWN = 100;

/** 1536 → "1.5 KB". */
function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 ** 2).toFixed(1)} MB`;
}

const name = (f: ContainerFile) => f.path.split('/').pop() || f.id;

/** The containers of one project (status, idle expiry, memory) and, opened one at a time, their files as downloads. */
export function Containers() {
  const { query } = useLocation();
  const [project, setProject] = useState(query.get('project') ?? '');
  const [open, setOpen] = useState(query.get('container') ?? '');
  useEffect(() => setQuery({ project, container: open }), [project, open]);
  const base = `projects/${encodeURIComponent(project)}`;
  const list = useData(
    async () => (project ? await get<List<Container>>(`${base}/containers${qs({ limit: SHOWN })}`) : undefined),
    [project],
  );
  useReveal(open, list.data);
  const d = list.data;
  return html`<h1>Containers</h1>
    <div class="row wrap pagebar">
      <${ProjectPicker} value=${project} onChange=${(id: string) => (setProject(id), setOpen(''))} />
      <button type="button" onClick=${() => void list.reload()}>Refresh</button>
    </div>
    <${ErrorLine} error=${list.error} />
    ${
      d
        ? html`<${Card} title="Containers" id="containers-h">
            ${
              d.data.length
                ? html`<ul class="plain items" aria-labelledby="containers-h">
                      ${d.data.map(
                        (c) =>
                          html`<li data-id=${c.id} class=${c.id === open ? 'sel' : ''}>
                            <div class="row wrap">
                              <strong>${c.name || '(no name)'}</strong>
                              <${Id} id=${c.id} />
                              <span class=${`badge ${c.status === 'running' ? 'ok' : 'bad'}`}>${c.status}</span>
                              <small class="muted">memory ${c.memory_limit}</small>
                            </div>
                            <small class="muted"
                              >${`Created ${time(c.created_at)} · last active ${time(c.last_active_at)} · ${c.status === 'running' ? 'expires' : 'expired'} ${time(c.last_active_at + c.expires_after.minutes * 60)} (after ${c.expires_after.minutes} min idle)`}</small
                            >
                            <div>
                              <button
                                type="button"
                                aria-expanded=${open === c.id}
                                aria-controls=${`cfiles-${c.id}`}
                                onClick=${() => setOpen(open === c.id ? '' : c.id)}
                              >
                                ${open === c.id ? 'Hide files' : 'Show files'} of ${c.name || c.id}
                              </button>
                            </div>
                            ${open === c.id ? html`<${Files} key=${c.id} id=${`cfiles-${c.id}`} container=${c} base=${base} />` : null}
                          </li>`,
                      )}
                    </ul>
                    ${d.has_more ? html`<p class="muted">The newest ${SHOWN} containers.</p>` : null}`
                : html`<${Empty}>No containers in this project.</${Empty}>`
            }
          </${Card}>`
        : project
          ? html`<p class="muted">Loading…</p>`
          : null
    }`;
}

/** A container's files: path, size, who made it (uploaded or written by code), each a download. */
function Files({ id, container, base }: { id: string; container: Container; base: string }) {
  const prefix = `${base}/containers/${encodeURIComponent(container.id)}/files`;
  const files = useData(async () => await get<List<ContainerFile>>(`${prefix}${qs({ limit: SHOWN })}`), [prefix]);
  const [failed, setFailed] = useState('');
  // Downloads go through fetch: the route needs the session's header, which a plain link cannot send.
  const fetchFile = (e: Event, href: string, filename: string) => {
    e.preventDefault();
    setFailed('');
    download(href, filename).catch((err: Error) => setFailed(`${filename} could not be downloaded: ${err.message}`));
  };
  return html`<div id=${id} class="drill">
    <${ErrorLine} error=${files.error || failed} />
    ${
      !files.data
        ? html`<p class="muted">Loading…</p>`
        : files.data.data.length
          ? html`<table class="cards">
                <caption class="sr">
                  Files of ${container.name || container.id}
                </caption>
                <thead>
                  <tr>
                    <th>Path</th>
                    <th>ID</th>
                    <th>Source</th>
                    <th class="num">Size</th>
                    <th>Created</th>
                  </tr>
                </thead>
                <tbody>
                  ${files.data.data.map((f) => {
                    const href = `/admin/v1/${prefix}/${encodeURIComponent(f.id)}/content`;
                    return html`<tr>
                      <td data-label="Path" class="break">
                        <a href=${href} download=${name(f)} onClick=${(e: Event) => fetchFile(e, href, name(f))}>${f.path}</a>
                      </td>
                      <td data-label="ID"><${Id} id=${f.id} /></td>
                      <td data-label="Source">${f.source === 'assistant' ? 'written by code' : 'uploaded'}</td>
                      <td data-label="Size" class="num nowrap">${size(f.bytes)}</td>
                      <td data-label="Created" class="nowrap">${time(f.created_at)}</td>
                    </tr>`;
                  })}
                </tbody>
              </table>
              ${files.data.has_more ? html`<p class="muted">The newest ${SHOWN} files.</p>` : null}`
          : html`<${Empty}>No files in this container${container.status === 'expired' ? ' (an expired container’s files are deleted by retention)' : ''}.</${Empty}>`
    }
  </div>`;
}
