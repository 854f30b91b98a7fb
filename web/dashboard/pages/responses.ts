import { useEffect, useState } from 'preact/hooks';
import type { Conversation, Item, List, ResponseEvent, ResponseSummary, StoredResponse } from '../../../src/dashboard/wire.js';
import { get, qs } from '../api.js';
import { setQuery, useLocation } from '../router.js';
import { Card, Copy, Empty, ErrorLine, Id, Json, html, time, useData } from '../ui.js';
import { ProjectPicker } from './project-picker.js';

/** Rows per page of each list; items and events are read a page at a time, on demand. */
const PAGE = 20;
const EVENTS_PAGE = 200;
const STATUSES = ['queued', 'in_progress', 'completed', 'incomplete', 'failed', 'cancelled'];
const ACTIVE = ['queued', 'in_progress'];

const tone = (status: string) => (status === 'completed' ? 'ok' : ['failed', 'cancelled', 'incomplete'].includes(status) ? 'bad' : 'warn');

type Usage = StoredResponse['usage'];
const usageText = (u: Usage) =>
  u
    ? `${u.input_tokens} in · ${u.output_tokens} out${u.output_tokens_details.reasoning_tokens ? ` (${u.output_tokens_details.reasoning_tokens} reasoning)` : ''} · ${u.total_tokens} tokens`
    : 'no usage';

/** Cursor pages of a list: the `after` of each page walked into, so Older and Newer move one page at a time. */
function useCursor(reset: unknown[]) {
  const [stack, setStack] = useState<string[]>([]);
  useEffect(() => setStack([]), reset);
  return {
    after: stack.at(-1),
    first: stack.length === 0,
    older: (lastId: string | null) => lastId && setStack((s) => [...s, lastId]),
    newer: () => setStack((s) => s.slice(0, -1)),
  };
}

const Pager = ({ cursor, page }: { cursor: ReturnType<typeof useCursor>; page: List<unknown> | undefined }) =>
  cursor.first && !page?.has_more
    ? null
    : html`<div class="row pager">
        <button type="button" disabled=${cursor.first} onClick=${cursor.newer}>Newer</button>
        <button type="button" disabled=${!page?.has_more} onClick=${() => cursor.older(page?.last_id ?? null)}>Older</button>
      </div>`;

/**
 * A project's stored responses (status, model, when, usage; filtered by status) and conversations, newest
 * first a page at a time; a response opens with its input and output items, usage and the stream kept of a
 * streamed background response; a conversation opens with its items.
 */
export function Responses() {
  const { query } = useLocation();
  const [project, setProject] = useState(query.get('project') ?? '');
  const [status, setStatus] = useState(query.get('status') ?? '');
  const [response, setResponse] = useState(query.get('response') ?? '');
  const [conversation, setConversation] = useState(query.get('conversation') ?? '');
  useEffect(() => setQuery({ project, status, response, conversation }), [project, status, response, conversation]);
  const base = `projects/${encodeURIComponent(project)}`;
  const rcur = useCursor([project, status]);
  const ccur = useCursor([project]);
  const responses = useData(
    async () => (project ? get<List<ResponseSummary>>(`${base}/responses${qs({ limit: PAGE, status, after: rcur.after })}`) : undefined),
    [project, status, rcur.after],
    3000,
  );
  const conversations = useData(
    async () => (project ? get<List<Conversation>>(`${base}/conversations${qs({ limit: PAGE, after: ccur.after })}`) : undefined),
    [project, ccur.after],
    5000,
  );
  // The detail opens above the lists: a row clicked far down brings the page back to it.
  const open = (id: string) => (setResponse(id), setConversation(''), window.scrollTo({ top: 0 }));
  const openConversation = (id: string) => (setConversation(id), setResponse(''), window.scrollTo({ top: 0 }));
  const close = () => (setResponse(''), setConversation(''));
  return html`<h1>Responses</h1>
    <div class="row wrap pagebar">
      <${ProjectPicker} value=${project} onChange=${(id: string) => (setProject(id), setResponse(''), setConversation(''))} />
      <label class="picker"
        >Status
        <select value=${status} onChange=${(e: Event) => setStatus((e.target as HTMLSelectElement).value)}>
          <option value="">any</option>
          ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      </label>
    </div>
    <${ErrorLine} error=${responses.error || conversations.error} />
    ${response ? html`<${ResponseDetail} key=${response} base=${`${base}/responses/${encodeURIComponent(response)}`} onOpen=${open} onClose=${close} />` : null}
    ${
      conversation
        ? html`<${ConversationDetail}
            key=${conversation}
            base=${`${base}/conversations/${encodeURIComponent(conversation)}`}
            id=${conversation}
            onClose=${close}
          />`
        : null
    }
    <div class="grid2">
      <${Card} title="Responses" id="responses-h">
        ${
          responses.data?.data.length
            ? html`<ul class="plain runs" aria-labelledby="responses-h">
                ${responses.data.data.map(
                  (r) =>
                    html`<li key=${r.id} data-id=${r.id} class=${r.id === response ? 'sel' : ''}>
                      <div class="row wrap">
                        <button type="button" class="link" aria-pressed=${r.id === response} onClick=${() => open(r.id)}>${r.id}</button>
                        <${Copy} id=${r.id} />
                        <span class=${`badge ${tone(r.status)}`}>${r.status}</span>
                        <small>${r.model}</small>
                        ${r.background ? html`<small class="muted">background</small>` : null}
                      </div>
                      <small class="muted"
                        >${[time(r.created_at), usageText(r.usage), r.output_types.join(', ')].filter(Boolean).join(' · ')}</small
                      >
                      ${r.error ? html`<br /><small class="error">${r.error.code}: ${r.error.message}</small>` : null}
                      ${r.incomplete_details ? html`<br /><small class="error">incomplete: ${r.incomplete_details.reason}</small>` : null}
                    </li>`,
                )}
              </ul>`
            : html`<${Empty}>${responses.data ? `No stored responses${status ? ` with status ${status}` : ''} in this project.` : 'Loading…'}</${Empty}>`
        }
        <${Pager} cursor=${rcur} page=${responses.data} />
      </${Card}>
      <${Card} title="Conversations" id="conversations-h">
        ${
          conversations.data?.data.length
            ? html`<ul class="plain" aria-labelledby="conversations-h">
                ${conversations.data.data.map(
                  (c) =>
                    html`<li key=${c.id} data-id=${c.id} class=${c.id === conversation ? 'sel' : ''}>
                      <div class="row wrap">
                        <button type="button" class="link" aria-pressed=${c.id === conversation} onClick=${() => openConversation(c.id)}>
                          ${c.id}
                        </button>
                        <${Copy} id=${c.id} />
                      </div>
                      <small class="muted">${time(c.created_at)}${Object.entries(c.metadata).map(([k, v]) => ` · ${k}: ${v}`)}</small>
                    </li>`,
                )}
              </ul>`
            : html`<${Empty}>${conversations.data ? 'No conversations in this project.' : 'Loading…'}</${Empty}>`
        }
        <${Pager} cursor=${ccur} page=${conversations.data} />
      </${Card}>
    </div>`;
}

/** A list read a page at a time on demand ("More"), from the first page: what has been read stays. */
function usePages<T extends { id?: string }>(path: string, size: number) {
  const [pages, setPages] = useState<List<T>[]>([]);
  const [error, setError] = useState('');
  const load = async (after?: string) => {
    try {
      const page = await get<List<T>>(
        `${path}${path.includes('?') ? '&' : '?'}limit=${size}${after ? `&after=${encodeURIComponent(after)}` : ''}`,
      );
      setPages((ps) => (after ? [...ps, page] : [page]));
      setError('');
    } catch (e) {
      setError((e as Error).message);
    }
  };
  useEffect(() => void load(), [path]);
  const last = pages.at(-1);
  return {
    items: pages.flatMap((p) => p.data),
    loaded: pages.length > 0,
    more: last?.has_more ? () => void load(last.last_id ?? undefined) : undefined,
    reload: () => void load(),
    error,
  };
}

function ResponseDetail({ base, onOpen, onClose }: { base: string; onOpen: (id: string) => void; onClose: () => void }) {
  const r = useData(() => get<StoredResponse>(base), [base], 3000);
  const input = usePages<Item>(`${base}/input_items?order=asc`, PAGE);
  const events = useEvents(`${base}/events`, r.data?.status);
  const d = r.data;
  return html`<section class="card" aria-labelledby="response-h">
      <header>
        <h2 id="response-h">Response <${Id} id=${d?.id ?? ''} /></h2>
        <div class="actions">
          ${d ? html`<span class=${`badge ${tone(d.status)}`}>${d.status}</span>` : null}
          <button type="button" onClick=${onClose}>Close</button>
        </div>
      </header>
      <${ErrorLine} error=${r.error} />
      ${
        d
          ? html`<dl class="kv">
              <dt>Model</dt>
              <dd>${d.model}${d.reasoning?.effort ? ` · reasoning effort ${d.reasoning.effort}` : ''}</dd>
              <dt>Created</dt>
              <dd>${time(d.created_at)}${d.completed_at ? ` · completed ${time(d.completed_at)}` : ''}</dd>
              <dt>Usage</dt>
              <dd>
                ${usageText(d.usage)}${d.usage?.input_tokens_details.cached_tokens ? ` · ${d.usage.input_tokens_details.cached_tokens} cached` : ''}
              </dd>
              <dt>Mode</dt>
              <dd>${d.background ? 'background' : 'foreground'} · ${d.store ? 'stored' : 'not stored'} · service tier ${d.service_tier}</dd>
              ${
                d.previous_response_id
                  ? html`<dt>Previous</dt>
                      <dd>
                        <button type="button" class="link" onClick=${() => onOpen(d.previous_response_id!)}>
                          ${d.previous_response_id}
                        </button>
                      </dd>`
                  : null
              }
              ${
                d.conversation
                  ? html`<dt>Conversation</dt>
                      <dd>
                        <a
                          href=${`/dashboard/responses${qs({ project: new URLSearchParams(location.search).get('project'), conversation: d.conversation.id })}`}
                          >${d.conversation.id}</a
                        >
                      </dd>`
                  : null
              }
              ${
                d.instructions
                  ? html`<dt>Instructions</dt>
                      <dd>${d.instructions}</dd>`
                  : null
              }
              ${
                d.tools.length
                  ? html`<dt>Tools</dt>
                      <dd>${d.tools.map((t) => (t as { name?: string; type: string }).name ?? t.type).join(', ')}</dd>`
                  : null
              }
              ${
                d.error
                  ? html`<dt>Error</dt>
                      <dd class="error">${d.error.code}: ${d.error.message}</dd>`
                  : null
              }
              ${
                d.incomplete_details
                  ? html`<dt>Incomplete</dt>
                      <dd class="error">${d.incomplete_details.reason}</dd>`
                  : null
              }
              ${
                Object.keys(d.metadata).length
                  ? html`<dt>Metadata</dt>
                      <dd>
                        ${Object.entries(d.metadata)
                          .map(([k, v]) => `${k}: ${v}`)
                          .join(' · ')}
                      </dd>`
                  : null
              }
            </dl>`
          : null
      }
    </section>
    <div class="grid2">
      <${Card} title="Input items" id="input-h">
        <${ErrorLine} error=${input.error} />
        ${
          input.items.length
            ? html`<ol class="plain items">
                ${input.items.map((i) => html`<${ItemView} item=${i} />`)}
              </ol>`
            : html`<${Empty}>${input.loaded ? 'No input items kept.' : 'Loading…'}</${Empty}>`
        }
        ${input.more ? html`<button type="button" onClick=${input.more}>More input items</button>` : null}
      </${Card}>
      <${Card} title="Output" id="output-h">
        ${
          d?.output.length
            ? html`<ol class="plain items">
                ${d.output.map((i) => html`<${ItemView} item=${i as unknown as Item} />`)}
              </ol>`
            : html`<${Empty}>${d && ACTIVE.includes(d.status) ? 'Not written yet.' : 'No output.'}</${Empty}>`
        }
      </${Card}>
    </div>
    <${Card} title="Stream" id="stream-h">
      <${ErrorLine} error=${events.error} />
      ${
        events.items.length
          ? html`<ol class="plain events" aria-label="Stream events">
              ${events.items.map(
                (e) =>
                  html`<li>
                    <details>
                      <summary><code>${e.sequence_number}</code> ${e.type}</summary>
                      <${Json} value=${e.event} />
                    </details>
                  </li>`,
              )}
            </ol>`
          : html`<${Empty}
              >${
                events.loaded
                  ? d?.background
                    ? 'No stream events kept: the response was not created with stream: true, or retention has dropped them.'
                    : 'Only a background response created with stream: true keeps its stream.'
                  : 'Loading…'
              }</${Empty}
            >`
      }
      ${events.more ? html`<button type="button" onClick=${events.more}>More events</button>` : null}
    </${Card}>`;
}

/** The stream kept of a response, a page at a time; while the response runs, its new events are read every 2 s. */
function useEvents(path: string, status: string | undefined) {
  const [items, setItems] = useState<ResponseEvent[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [hasMore, setHasMore] = useState(false);
  const [error, setError] = useState('');
  const load = async (after: number) => {
    try {
      const page = await get<{ data: ResponseEvent[]; has_more: boolean }>(`${path}${qs({ after, limit: EVENTS_PAGE })}`);
      setItems((xs) =>
        after < 0 ? page.data : [...xs, ...page.data.filter((e) => e.sequence_number > (xs.at(-1)?.sequence_number ?? -1))],
      );
      setHasMore(page.has_more);
      setLoaded(true);
      setError('');
    } catch (e) {
      setError((e as Error).message);
    }
  };
  useEffect(() => void load(-1), [path]);
  const last = items.at(-1)?.sequence_number ?? -1;
  const running = status !== undefined && ACTIVE.includes(status);
  useEffect(() => {
    if (!running || hasMore) return;
    const t = setInterval(() => document.visibilityState === 'visible' && void load(last), 2000);
    return () => clearInterval(t);
  }, [running, hasMore, last]);
  return { items, loaded, error, more: hasMore ? () => void load(last) : undefined };
}

function ConversationDetail({ base, id, onClose }: { base: string; id: string; onClose: () => void }) {
  const items = usePages<Item>(`${base}/items?order=asc`, PAGE);
  return html`<${Card} title="Conversation items" id="conversation-h" actions=${html`<button type="button" onClick=${items.reload}>
      Refresh</button
    ><button type="button" onClick=${onClose}>Close</button>`}>
    <p class="muted">Conversation <${Id} id=${id} /> · oldest first</p>
    <${ErrorLine} error=${items.error} />
    ${
      items.items.length
        ? html`<ol class="plain items">
            ${items.items.map((i) => html`<${ItemView} item=${i} />`)}
          </ol>`
        : html`<${Empty}>${items.loaded ? 'No items.' : 'Loading…'}</${Empty}>`
    }
    ${items.more ? html`<button type="button" onClick=${items.more}>More items</button>` : null}
  </${Card}>`;
}

type Part = {
  type: string;
  text?: string;
  refusal?: string;
  image_url?: string | null;
  file_id?: string | null;
  filename?: string | null;
  file_url?: string | null;
};

/** One content part: its text, or what an image or file part names (a data URL is not shown, only its size). */
function partText(p: Part): string {
  if (p.type === 'input_text' || p.type === 'output_text' || p.type === 'summary_text' || p.type === 'reasoning_text') return p.text ?? '';
  if (p.type === 'refusal') return `refusal: ${p.refusal ?? ''}`;
  if (p.type === 'input_image')
    return `image: ${p.file_id ?? (p.image_url?.startsWith('data:') ? `data URL, ${p.image_url.length} characters` : (p.image_url ?? '—'))}`;
  if (p.type === 'input_file') return `file: ${p.filename ?? p.file_id ?? p.file_url ?? 'inline data'}`;
  return p.type;
}

/** An input or output item by its type: messages, function and custom tool calls and their outputs, reasoning; any other (a tool call) by its type and status. */
function ItemView({ item }: { item: Item }) {
  const i = item as Item & Record<string, unknown>;
  const status = typeof i.status === 'string' ? html`<span class=${`badge ${tone(i.status)}`}>${i.status}</span>` : null;
  let body;
  let title: string = i.type;
  if (item.type === 'message') {
    title = `${item.role} message`;
    body = (item.content as Part[]).map((p) => html`<p class="part">${partText(p)}</p>`);
  } else if (item.type === 'function_call') {
    title = `function call ${item.name}`;
    body = html`<code class="call">${item.name}(${item.arguments})</code><br /><small class="muted">call ${item.call_id}</small>`;
  } else if (item.type === 'custom_tool_call') {
    title = `custom tool call ${item.name}`;
    body = html`<p class="part">${item.input}</p>
      <small class="muted">call ${item.call_id}</small>`;
  } else if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
    title = item.type === 'function_call_output' ? 'function call output' : 'custom tool call output';
    body = html`<small class="muted">call ${item.call_id}</small>
      <p class="part">${typeof item.output === 'string' ? item.output : (item.output as Part[]).map(partText).join('\n')}</p>`;
  } else if (item.type === 'reasoning') {
    body = html`${item.summary.length ? item.summary.map((p) => html`<p class="part">${p.text}</p>`) : html`<small class="muted">no summary</small>`}
    ${item.encrypted_content ? html`<br /><small class="muted">encrypted_content (${item.encrypted_content.length} characters)</small>` : null}`;
  }
  return html`<li data-id=${i.id}>
    <div class="row wrap"><strong>${title}</strong>${status}<small class="muted">${i.id}</small></div>
    ${body}
    <details>
      <summary>JSON</summary>
      <${Json} value=${item} />
    </details>
  </li>`;
}
