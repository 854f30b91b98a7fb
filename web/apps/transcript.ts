// The transcript: what the model sees (tool calls, structuredContent and content, widget descriptions,
// follow-ups, widget state), and host events marked as not seen by it.
import { html } from 'htm/preact';
import { useEffect, useRef } from 'preact/hooks';
import { Cell, useCell } from './cell.js';
import { pretty } from './json.js';

export interface TranscriptEntry {
  kind: string;
  title: string;
  body?: unknown;
}
export const entries = new Cell<TranscriptEntry[]>([]);
/** Set by a follow-up that asked to scroll the transcript to its end. */
let scrollToEnd = false;

/** Adds a transcript entry. */
export function addTranscript(kind: string, title: string, body?: unknown, opts: { scrollToBottom?: boolean } = {}) {
  if (opts.scrollToBottom) scrollToEnd = true;
  entries.update((list) => [...list, { kind, title, body }]);
}

// Links opened, files moved and logs are host events: shown for debugging, marked as not seen by the model.
const HOST_ONLY = ['link', 'file', 'log'];

function Entry({ e }: { e: TranscriptEntry }) {
  const hostOnly = HOST_ONLY.includes(e.kind);
  return html`<li data-kind=${e.kind} data-model=${String(!hostOnly)} class=${hostOnly ? 'host-only' : ''}>
    ${hostOnly && html`<small>[host only] </small>`}<strong>${e.title}</strong>
    ${e.body !== undefined && html`<pre>${typeof e.body === 'string' ? e.body : pretty(e.body)}</pre>`}
  </li>`;
}

/** The transcript's heading and entries. */
export function TranscriptEntries() {
  const list = useCell(entries);
  const ol = useRef<HTMLOListElement>(null);
  useEffect(() => {
    const last = ol.current?.lastElementChild;
    if (!last) return;
    last.scrollIntoView({ block: scrollToEnd ? 'end' : 'nearest' });
    scrollToEnd = false;
  }, [list.length]);
  return html`<h2>Transcript</h2>
    <p class="muted">
      What the model sees: tool calls, structuredContent and content (never _meta), widget descriptions, follow-ups, widget state.
    </p>
    <ol id="transcript-entries" ref=${ol}>
      ${list.map((e, i) => html`<${Entry} key=${i} e=${e} />`)}
    </ol>`;
}
