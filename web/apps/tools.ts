// The server's tools: each with its badges, lint findings, descriptor and a form to call it as the model.
import { html } from 'htm/preact';
import { useRef } from 'preact/hooks';
import type { ConnectionReply, Finding, ToolEntry } from '../../src/apps/host/wire.js';
import { uploadBlob } from './api.js';
import { useCell } from './cell.js';
import { arr, descriptor, exampleArgs, obj, parseArgs, pretty, type JsonObject } from './json.js';
import { callAsModel } from './model-call.js';
import { V } from './settings.js';
import { connection, setStatus } from './state.js';

export function FindingList({ findings }: { findings: Finding[] }) {
  return html`<ul class="findings">
    ${findings.map(
      (f) =>
        html`<li class=${f.severity} data-rule=${f.rule}>
          <b>${f.severity}</b> <code>${f.path}</code> ${f.message} <small>[${f.rule}]</small>
        </li>`,
    )}
  </ul>`;
}

function findingsFor(conn: ConnectionReply, index: number): Finding[] {
  const uri = conn.tools[index].templateUri;
  return conn.findings.filter(
    (f) => f.path.startsWith(`$.tools[${index}]`) || (uri && f.path.startsWith(`$.resources[${JSON.stringify(uri)}]`)),
  );
}

function ToolForm({ t }: { t: ToolEntry }) {
  const d = descriptor(t.descriptor);
  const fileParams = arr(d._meta?.[V('fileParams')]).filter((p): p is string => typeof p === 'string');
  const props = obj(d.inputSchema?.properties);
  const initial = Object.fromEntries(Object.entries(exampleArgs(d.inputSchema)).filter(([k]) => !fileParams.includes(k)));
  const form = useRef<HTMLFormElement>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = form.current!;
    let args: JsonObject;
    try {
      args = parseArgs((f.elements.namedItem('arguments') as HTMLTextAreaElement).value);
    } catch (err) {
      return setStatus((err as Error).message, 'error');
    }
    for (const input of f.querySelectorAll<HTMLInputElement>('input[type="file"]')) {
      const files = [...(input.files ?? [])];
      if (!files.length) continue;
      const objs = [];
      for (const file of files) objs.push({ file_id: (await uploadBlob(file, file.name, true)).fileId });
      args[input.name] = input.multiple ? objs : objs[0];
    }
    await callAsModel(d.name, args);
  };
  return html`<form class="call-form" ref=${form} onSubmit=${submit}>
    <label
      >Arguments (JSON)<textarea
        name="arguments"
        rows="5"
        cols="40"
        aria-label=${`Arguments of ${d.name}`}
        defaultValue=${pretty(initial)}
      />
    </label>
    ${fileParams.map(
      (p) =>
        html`<label
          >File input ${p} <input type="file" name=${p} multiple=${obj(props[p]).type === 'array'} aria-label=${`File for ${p}`}
        /></label>`,
    )}
    <button type="submit" disabled=${!t.visibility.model} title=${t.visibility.model ? '' : 'hidden from the model (visibility)'}>
      Call ${d.name}
    </button>
  </form>`;
}

function Tool({ conn, t, i }: { conn: ConnectionReply; t: ToolEntry; i: number }) {
  const d = descriptor(t.descriptor);
  const a = d.annotations ?? {};
  const fs = findingsFor(conn, i);
  const errors = fs.filter((f) => f.severity === 'error').length;
  const badges = [
    a.readOnlyHint === true && 'read-only',
    a.destructiveHint === true && 'destructive',
    a.openWorldHint === true && 'open-world',
    t.templateUri && 'UI',
    !t.visibility.model && 'app only',
    !t.visibility.app && 'model only',
  ].filter((b): b is string => typeof b === 'string');
  return html`<details class="tool" data-tool=${d.name}>
    <summary>
      <code>${d.name}</code> ${badges.map((b) => html`<span class="badge">${b}</span>`)}
      ${fs.length > 0 && html`<span class=${errors ? 'badge error' : 'badge warning'}>${fs.length} finding(s)</span>`}
    </summary>
    ${d.description && html`<p>${d.description}</p>`}
    <${ToolForm} t=${t} />
    ${fs.length > 0 && html`<${FindingList} findings=${fs} />`}
    <details>
      <summary>Descriptor</summary>
      <pre>${pretty(t.descriptor)}</pre>
    </details>
  </details>`;
}

/** The tools pane. */
export function ToolList() {
  const conn = useCell(connection);
  if (!conn) return html`<aside id="tools" aria-label="Tools"><p class="muted">Connect to a server to list its tools.</p></aside>`;
  const general = conn.findings.filter((f) => !/^\$\.(tools|resources)\[/.test(f.path));
  return html`<aside id="tools" aria-label="Tools">
    <h2>Tools</h2>
    ${general.length > 0 && html`<${FindingList} findings=${general} />`}
    ${conn.tools.map((t, i) => html`<${Tool} key=${`${conn.id}:${i}`} conn=${conn} t=${t} i=${i} />`)}
  </aside>`;
}
