import { useEffect, useState } from 'preact/hooks';
import type { List, Run, RunEvent, Step, Thread } from '../../../src/dashboard/wire.js';
import { get } from '../api.js';
import { setQuery, useLocation } from '../router.js';
import { Card, Copy, Empty, ErrorLine, Id, Json, html, time, useData, useReveal } from '../ui.js';
import { ProjectPicker } from './project-picker.js';

const tone = (status: string) =>
  status === 'completed' ? 'ok' : ['failed', 'expired', 'cancelled', 'incomplete'].includes(status) ? 'bad' : 'warn';

/**
 * The project's recent runs (newest first, no thread to choose first), its threads, and a run's steps as a
 * timeline (model, tool calls, outputs) with a replay of its stream.
 */
export function Runs() {
  const { query } = useLocation();
  const [project, setProject] = useState(query.get('project') ?? '');
  const [thread, setThread] = useState(query.get('thread') ?? '');
  const [run, setRun] = useState(query.get('run') ?? '');
  useEffect(() => setQuery({ project, thread, run }), [project, thread, run]);
  const base = `projects/${encodeURIComponent(project)}`;
  const threads = useData(async () => (project ? (await get<List<Thread>>(`${base}/threads?limit=50`)).data : []), [project], 5000);
  // Without a thread: the project's newest runs across its threads; with one, that thread's.
  const runs = useData(
    async () =>
      project
        ? (await get<List<Run>>(thread ? `${base}/threads/${encodeURIComponent(thread)}/runs?limit=50` : `${base}/runs?limit=50`)).data
        : [],
    [project, thread],
    3000,
  );
  const open = runs.data?.find((r) => r.id === run);
  const runThread = thread || open?.thread_id || '';
  useReveal(run, runs.data);
  return html`<h1>Runs</h1>
    <${ProjectPicker} value=${project} onChange=${(id: string) => (setProject(id), setThread(''), setRun(''))} />
    <${ErrorLine} error=${threads.error || runs.error} />
    <div class="grid2">
      <${Card}
        title=${thread ? 'Runs of the thread' : 'Recent runs'}
        id="runs-h"
        actions=${thread ? html`<button type="button" onClick=${() => (setThread(''), setRun(''))}>All runs of the project</button>` : null}
      >
        ${thread ? html`<p class="muted">Thread <${Id} id=${thread} /></p>` : null}
        ${
          runs.data?.length
            ? html`<ul class="plain runs" aria-labelledby="runs-h">
                ${runs.data.map(
                  (r) =>
                    html`<li key=${r.id} data-id=${r.id} class=${r.id === run ? 'sel' : ''}>
                      <div class="row wrap">
                        <button type="button" class="link" aria-pressed=${r.id === run} onClick=${() => setRun(r.id)}>${r.id}</button>
                        <${Copy} id=${r.id} />
                        <span class=${`badge ${tone(r.status)}`}>${r.status}</span>
                        <small>${r.model}</small>
                      </div>
                      <small class="muted"
                        >${time(r.created_at)}${r.usage ? ` · ${r.usage.total_tokens} tokens` : ''}${thread ? '' : ` · thread ${r.thread_id}`}</small
                      >
                      ${r.last_error ? html`<br /><small class="error">${r.last_error.code}: ${r.last_error.message}</small>` : null}
                    </li>`,
                )}
              </ul>`
            : html`<${Empty}>${thread ? 'No runs on this thread.' : 'No runs in this project.'}</${Empty}>`
        }
      </${Card}>
      <${Card} title="Threads" id="threads-h">
        ${
          threads.data?.length
            ? html`<ul class="plain">
                ${threads.data.map(
                  (t) =>
                    html`<li>
                      <button type="button" class="link" aria-pressed=${t.id === thread} onClick=${() => (setThread(t.id), setRun(''))}>
                        ${t.id}
                      </button>
                      <small class="muted">${time(t.created_at)}</small>
                    </li>`,
                )}
              </ul>`
            : html`<${Empty}>No threads in this project.</${Empty}>`
        }
      </${Card}>
    </div>
    ${run && runThread ? html`<${RunDetail} key=${run} base=${`${base}/threads/${encodeURIComponent(runThread)}/runs/${encodeURIComponent(run)}`} />` : null}`;
}

function RunDetail({ base }: { base: string }) {
  const steps = useData(async () => (await get<List<Step>>(`${base}/steps?limit=100`)).data, [base], 3000);
  const events = useData(async () => (await get<{ data: RunEvent[] }>(`${base}/events`)).data, [base], 3000);
  const [shown, setShown] = useState<number | null>(null);
  // Replay: the stream's events appear one by one, as a client received them.
  const replay = () => {
    setShown(0);
    const total = events.data?.length ?? 0;
    let n = 0;
    const t = setInterval(() => {
      n++;
      setShown(n);
      if (n >= total) clearInterval(t);
    }, 120);
  };
  const visible = shown === null ? events.data : events.data?.slice(0, shown);
  return html`<div class="grid2">
    <${Card} title="Steps" id="steps-h">
      <${ErrorLine} error=${steps.error} />
      ${
        steps.data?.length
          ? html`<ol class="timeline" aria-label="Steps">
              ${steps.data.map(
                (st) =>
                  html`<li class=${st.status === 'failed' ? 'bad' : ''} data-id=${st.id}>
                    <div class="row wrap">
                      <strong>${st.step_details.type === 'tool_calls' ? 'Tool calls' : 'Message'}</strong>
                      <span class=${`badge ${tone(st.status)}`}>${st.status}</span> <small class="muted">${time(st.created_at)}</small>
                    </div>
                    ${
                      st.step_details.type === 'message_creation'
                        ? html`<small>message <${Id} id=${st.step_details.message_creation.message_id} /></small>`
                        : st.step_details.tool_calls.map(
                            (c) =>
                              html`<details>
                                <summary>${c.type}${c.type === 'function' ? ` ${c.function.name}` : ''}</summary>
                                <${Json} value=${c} />
                              </details>`,
                          )
                    }
                    ${st.last_error ? html`<p class="error">${st.last_error.code}: ${st.last_error.message}</p>` : null}
                  </li>`,
              )}
            </ol>`
          : html`<${Empty}>No steps yet.</${Empty}>`
      }
    </${Card}>
    <${Card} title="Stream" id="stream-h" actions=${html`<button type="button" onClick=${replay} disabled=${!events.data?.length}>Replay</button>`}>
      <${ErrorLine} error=${events.error} />
      ${
        visible?.length
          ? html`<ol class="plain events" aria-live="polite">
              ${visible.map(
                (e) =>
                  html`<li>
                    <details>
                      <summary><code>${e.seq}</code> ${e.event}</summary>
                      <${Json} value=${e.data} />
                    </details>
                  </li>`,
              )}
            </ol>`
          : html`<${Empty}>${events.data?.length ? 'Replaying…' : 'No stream events kept for this run.'}</${Empty}>`
      }
    </${Card}>
  </div>`;
}
