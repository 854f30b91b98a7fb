import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.js';
import { setQuery, useLocation } from '../router.js';
import { Card, Empty, ErrorLine, Json, html, time, useData } from '../ui.js';
import { ProjectPicker } from './project-picker.js';

interface Run {
  id: string;
  status: string;
  model: string;
  assistant_id: string;
  created_at: number;
  completed_at: number | null;
  last_error: { code: string; message: string } | null;
  usage: { total_tokens: number } | null;
}
interface Step {
  id: string;
  type: string;
  status: string;
  created_at: number;
  completed_at: number | null;
  step_details: {
    type: string;
    message_creation?: { message_id: string };
    tool_calls?: { id: string; type: string; [k: string]: unknown }[];
  };
  last_error: { code: string; message: string } | null;
}
interface RunEvent {
  seq: number;
  event: string;
  data: unknown;
}

const tone = (status: string) =>
  status === 'completed' ? 'ok' : ['failed', 'expired', 'cancelled', 'incomplete'].includes(status) ? 'bad' : 'warn';

/** Threads → runs → steps as a timeline (model, tool calls, outputs), and a replay of each run's stream. */
export function Runs() {
  const { query } = useLocation();
  const [project, setProject] = useState(query.get('project') ?? '');
  const [thread, setThread] = useState(query.get('thread') ?? '');
  const [run, setRun] = useState(query.get('run') ?? '');
  useEffect(() => setQuery({ project, thread, run }), [project, thread, run]);
  const base = `projects/${encodeURIComponent(project)}`;
  const threads = useData(
    async () => (project ? (await get<{ data: { id: string; created_at: number }[] }>(`${base}/threads?limit=50`)).data : []),
    [project],
    5000,
  );
  const runs = useData(
    async () => (thread ? (await get<{ data: Run[] }>(`${base}/threads/${thread}/runs?limit=50`)).data : []),
    [project, thread],
    3000,
  );
  return html`<h1>Runs</h1>
    <${ProjectPicker} value=${project} onChange=${(id: string) => (setProject(id), setThread(''), setRun(''))} />
    <${ErrorLine} error=${threads.error || runs.error} />
    <div class="grid2">
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
      <${Card} title="Runs" id="runs-h">
        ${
          !thread
            ? html`<${Empty}>Choose a thread.</${Empty}>`
            : runs.data?.length
              ? html`<ul class="plain">
                  ${runs.data.map(
                    (r) =>
                      html`<li>
                        <button type="button" class="link" aria-pressed=${r.id === run} onClick=${() => setRun(r.id)}>${r.id}</button>
                        <span class=${`badge ${tone(r.status)}`}>${r.status}</span>
                        <small class="muted">${r.model} · ${time(r.created_at)}${r.usage ? ` · ${r.usage.total_tokens} tokens` : ''}</small>
                        ${r.last_error ? html`<br /><small class="error">${r.last_error.code}: ${r.last_error.message}</small>` : null}
                      </li>`,
                  )}
                </ul>`
              : html`<${Empty}>No runs on this thread.</${Empty}>`
        }
      </${Card}>
    </div>
    ${run && thread ? html`<${RunDetail} key=${run} base=${`${base}/threads/${thread}/runs/${run}`} />` : null}`;
}

function RunDetail({ base }: { base: string }) {
  const steps = useData(async () => (await get<{ data: Step[] }>(`${base}/steps?limit=100`)).data, [base], 3000);
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
                  html`<li class=${st.status === 'failed' ? 'bad' : ''}>
                    <div class="row wrap">
                      <strong>${st.step_details.type === 'tool_calls' ? 'Tool calls' : 'Message'}</strong>
                      <span class=${`badge ${tone(st.status)}`}>${st.status}</span> <small class="muted">${time(st.created_at)}</small>
                    </div>
                    ${st.step_details.message_creation ? html`<small>message <code>${st.step_details.message_creation.message_id}</code></small>` : null}
                    ${st.step_details.tool_calls?.map(
                      (c) =>
                        html`<details>
                          <summary>${c.type}${c.type === 'function' ? ` ${(c.function as { name: string }).name}` : ''}</summary>
                          <${Json} value=${c} />
                        </details>`,
                    )}
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
