import { useEffect, useState } from 'preact/hooks';
import { download, get, qs } from '../api.js';
import { setQuery, useLocation } from '../router.js';
import type { Batch, FileRow, List, StoreFile, VectorStore } from '../../../src/dashboard/wire.js';
import { Card, Empty, ErrorLine, Id, html, time, useData, useReveal } from '../ui.js';
import { ProjectPicker } from './project-picker.js';

type Counts = VectorStore['file_counts'];

/** How often the page reads while something is in progress; it stops reading once everything is final. */
const LIVE_MS = 2000;
const SHOWN = 100;
const BATCH_FINAL = ['completed', 'failed', 'expired', 'cancelled'];

const tone = (status: string) =>
  status === 'completed' || status === 'processed' ? 'ok' : ['failed', 'expired', 'cancelled'].includes(status) ? 'bad' : 'warn';

/** 1536 → "1.5 KB". */
function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}

const StatusBadge = ({ status }: { status: string }) => html`<span class=${`badge ${tone(status)}`}>${status.replace('_', ' ')}</span>`;

/** Files, vector stores (file counts, ingestion errors) and batches (progress) of one project, live while any is in progress. */
export function Files() {
  const { query } = useLocation();
  const [project, setProject] = useState(query.get('project') ?? '');
  const [open, setOpen] = useState(query.get('vector_store') ?? '');
  useEffect(
    () => setQuery({ project, vector_store: open, file: query.get('file') ?? '', batch: query.get('batch') ?? '' }),
    [project, open],
  );
  const base = `projects/${encodeURIComponent(project)}`;
  const [live, setLive] = useState(false);
  const all = useData(
    async () => {
      if (!project) return undefined;
      const [files, stores, batches] = await Promise.all([
        get<List<FileRow>>(`${base}/files${qs({ limit: SHOWN })}`),
        get<List<VectorStore>>(`${base}/vector_stores${qs({ limit: SHOWN })}`),
        get<List<Batch>>(`${base}/batches${qs({ limit: SHOWN })}`),
      ]);
      return { files, stores, batches };
    },
    [project],
    live ? LIVE_MS : 0,
  );
  const d = all.data;
  useEffect(() => {
    setLive(!!d && (d.stores.data.some((v) => v.status === 'in_progress') || d.batches.data.some((b) => !BATCH_FINAL.includes(b.status))));
  }, [d]);
  const names = new Map(d?.files.data.map((f) => [f.id, f.filename]));
  // Where a search for a file or a batch landed.
  const found = query.get('file') ?? query.get('batch');
  useReveal(found ?? open, d);
  const [failed, setFailed] = useState('');
  // Downloads go through fetch: the file route needs the session's header, which a plain link cannot send.
  const fetchFile = (e: Event, href: string, name: string) => {
    e.preventDefault();
    setFailed('');
    download(href, name).catch((err: Error) => setFailed(`${name} could not be downloaded: ${err.message}`));
  };
  const link = (id: string | null, label?: string) => {
    if (!id) return html`<span class="muted">—</span>`;
    const href = `/admin/v1/${base}/files/${encodeURIComponent(id)}/content`;
    const name = names.get(id) ?? id;
    return html`<a href=${href} download=${name} onClick=${(e: Event) => fetchFile(e, href, name)}>${label ?? name}</a>`;
  };
  return html`<h1>Files & batches</h1>
    <div class="row wrap pagebar">
      <${ProjectPicker} value=${project} onChange=${(id: string) => (setProject(id), setOpen(''))} />
      <span class="muted" role="status" aria-live="polite"
        >${!d ? 'Loading…' : live ? `Live: updating every ${LIVE_MS / 1000} s while something is in progress` : 'Up to date; nothing in progress'}</span
      >
      <button type="button" onClick=${() => void all.reload()}>Refresh</button>
    </div>
    <${ErrorLine} error=${all.error || failed} />
    ${
      d
        ? html`${found && ![...d.files.data, ...d.batches.data].some((x) => x.id === found) ? html`<p class="notice">${found} is older than the newest ${SHOWN} shown here.</p>` : null}
            <${Batches} batches=${d.batches} link=${link} found=${found} />
            <${VectorStores} stores=${d.stores} base=${base} open=${open} setOpen=${setOpen} names=${names} />
            <${FilesTable} files=${d.files} link=${link} found=${found} />`
        : null
    }`;
}

type Link = (id: string | null, label?: string) => unknown;

function Batches({ batches, link, found }: { batches: List<Batch>; link: Link; found: string | null }) {
  return html`<${Card} title="Batches" id="batches-h">
    ${
      batches.data.length
        ? html`<ul class="plain items" aria-labelledby="batches-h">
              ${batches.data.map((b) => {
                const { total, completed, failed } = b.request_counts;
                const pct = Math.round(b.progress * 100);
                const ended = b.completed_at ?? b.failed_at ?? b.expired_at ?? b.cancelled_at;
                return html`<li data-id=${b.id} class=${b.id === found ? 'sel' : ''}>
                  <div class="row wrap">
                    <${Id} id=${b.id} />
                    <${StatusBadge} status=${b.status} />
                    <small class="muted">${b.endpoint}${b.model ? ` · ${b.model}` : ''}</small>
                  </div>
                  <div class="row">
                    <div
                      class="bar grow"
                      role="progressbar"
                      aria-label=${`Progress of ${b.id}`}
                      aria-valuemin="0"
                      aria-valuemax="100"
                      aria-valuenow=${pct}
                    >
                      <span class="seg ok" style=${`width:${total ? (completed / total) * 100 : 0}%`}></span>
                      <span class="seg bad" style=${`width:${total ? (failed / total) * 100 : 0}%`}></span>
                    </div>
                    <span class="nowrap num">${pct} %</span>
                  </div>
                  <small class="counts"
                    >${`${total ? `${completed + failed} of ${total} requests` : 'counting requests'} · ${completed} completed · `}<span
                      class=${failed ? 'error' : ''}
                      >${`${failed} failed`}</span
                    ></small
                  >
                  <dl class="kv times">
                    <dt>Created</dt>
                    <dd>${time(b.created_at)}</dd>
                    <dt>In progress</dt>
                    <dd>${time(b.in_progress_at)}</dd>
                    <dt>Finalizing</dt>
                    <dd>${time(b.finalizing_at)}</dd>
                    <dt>${b.failed_at ? 'Failed' : b.expired_at ? 'Expired' : b.cancelled_at ? 'Cancelled' : 'Completed'}</dt>
                    <dd>${time(ended)}</dd>
                    <dt>Input</dt>
                    <dd>${link(b.input_file_id)}</dd>
                    <dt>Output</dt>
                    <dd>${link(b.output_file_id)}</dd>
                    <dt>Errors</dt>
                    <dd>${link(b.error_file_id)}</dd>
                  </dl>
                  ${
                    b.errors?.data.length
                      ? html`<ul class="error">
                          ${b.errors.data.map((e) => html`<li>${e.line ? `line ${e.line}: ` : ''}${e.code}: ${e.message}</li>`)}
                        </ul>`
                      : null
                  }
                </li>`;
              })}
            </ul>
            ${batches.has_more ? html`<p class="muted">The newest ${SHOWN} batches.</p>` : null}`
        : html`<${Empty}>No batches in this project.</${Empty}>`
    }
  </${Card}>`;
}

const SEGMENTS = [
  ['completed', 'ok'],
  ['in_progress', 'warn'],
  ['failed', 'bad'],
  ['cancelled', 'off'],
] as const;

/** File counts as one stacked bar, with the counts in words beside it (the bar is for the eye only). */
function CountsBar({ counts }: { counts: Counts }) {
  return html`<div class="row wrap">
    <div class="bar counts-bar" aria-hidden="true">
      ${SEGMENTS.map(([k, t]) => html`<span class=${`seg ${t}`} style=${`width:${counts.total ? (counts[k] / counts.total) * 100 : 0}%`}></span>`)}
    </div>
    <small class="counts"
      >${`${SEGMENTS.filter(([k]) => counts[k] || k === 'completed')
        .map(([k]) => `${counts[k]} ${k.replace('_', ' ')}`)
        .join(' · ')} of ${counts.total}`}</small
    >
  </div>`;
}

function VectorStores({
  stores,
  base,
  open,
  setOpen,
  names,
}: {
  stores: List<VectorStore>;
  base: string;
  open: string;
  setOpen: (id: string) => void;
  names: Map<string, string>;
}) {
  return html`<${Card} title="Vector stores" id="stores-h">
    ${
      stores.data.length
        ? html`<ul class="plain items" aria-labelledby="stores-h">
              ${stores.data.map(
                (v) =>
                  html`<li data-id=${v.id} class=${v.id === open ? 'sel' : ''}>
                    <div class="row wrap">
                      <strong>${v.name || '(no name)'}</strong>
                      <${Id} id=${v.id} />
                      <${StatusBadge} status=${v.status} />
                      <small class="muted">${size(v.usage_bytes)}</small>
                    </div>
                    <${CountsBar} counts=${v.file_counts} />
                    <small class="muted"
                      >Last active ${time(v.last_active_at)} · ${v.expires_at ? `expires ${time(v.expires_at)}` : 'does not expire'}</small
                    >
                    <div>
                      <button
                        type="button"
                        aria-expanded=${open === v.id}
                        aria-controls=${`files-${v.id}`}
                        onClick=${() => setOpen(open === v.id ? '' : v.id)}
                      >
                        ${open === v.id ? 'Hide files' : 'Show files'} of ${v.name || v.id}
                      </button>
                    </div>
                    ${open === v.id ? html`<${StoreFiles} key=${v.id} id=${`files-${v.id}`} store=${v} base=${base} names=${names} />` : null}
                  </li>`,
              )}
            </ul>
            ${stores.has_more ? html`<p class="muted">The newest ${SHOWN} vector stores.</p>` : null}`
        : html`<${Empty}>No vector stores in this project.</${Empty}>`
    }
  </${Card}>`;
}

/** A store's files with each one's status and ingestion error; read again whenever the store's counts change. */
function StoreFiles({ id, store, base, names }: { id: string; store: VectorStore; base: string; names: Map<string, string> }) {
  const files = useData(
    async () => await get<List<StoreFile>>(`${base}/vector_stores/${encodeURIComponent(store.id)}/files${qs({ limit: SHOWN })}`),
    [base, store.id, JSON.stringify(store.file_counts)],
  );
  return html`<div id=${id} class="drill">
    <${ErrorLine} error=${files.error} />
    ${
      !files.data
        ? html`<p class="muted">Loading…</p>`
        : files.data.data.length
          ? html`<table class="cards">
              <caption class="sr">
                Files of ${store.name || store.id}
              </caption>
              <thead>
                <tr>
                  <th>File</th>
                  <th>Status</th>
                  <th class="num">Indexed</th>
                  <th>Last error</th>
                </tr>
              </thead>
              <tbody>
                ${files.data.data.map(
                  (f) =>
                    html`<tr>
                      <td data-label="File" class="break">
                        ${names.get(f.id) ? html`${names.get(f.id)}<br />` : null}<code>${f.id}</code>
                      </td>
                      <td data-label="Status"><${StatusBadge} status=${f.status} /></td>
                      <td data-label="Indexed" class="num">${size(f.usage_bytes)}</td>
                      <td data-label="Last error" class=${f.last_error ? 'error break' : 'muted'}>
                        ${f.last_error ? `${f.last_error.code}: ${f.last_error.message}` : '—'}
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
          : html`<${Empty}>No files in this vector store.</${Empty}>`
    }
  </div>`;
}

function FilesTable({ files, link, found }: { files: List<FileRow>; link: Link; found: string | null }) {
  return html`<${Card} title="Files" id="files-h">
    ${
      files.data.length
        ? html`<table class="cards" aria-labelledby="files-h">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>ID</th>
                  <th>Purpose</th>
                  <th class="num">Size</th>
                  <th>Created</th>
                  <th>Status</th>
                </tr>
              </thead>
              <tbody>
                ${files.data.map(
                  (f) =>
                    html`<tr data-id=${f.id} class=${f.id === found ? 'sel' : ''}>
                      <td data-label="Name" class="break">${link(f.id, f.filename)}</td>
                      <td data-label="ID"><${Id} id=${f.id} /></td>
                      <td data-label="Purpose">${f.purpose}</td>
                      <td data-label="Size" class="num nowrap">${size(f.bytes)}</td>
                      <td data-label="Created" class="nowrap">${time(f.created_at)}</td>
                      <td data-label="Status"><${StatusBadge} status=${f.status} /></td>
                    </tr>`,
                )}
              </tbody>
            </table>
            ${files.has_more ? html`<p class="muted">The newest ${SHOWN} files.</p>` : null}`
        : html`<${Empty}>No files in this project.</${Empty}>`
    }
  </${Card}>`;
}
