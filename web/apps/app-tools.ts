// Tools a mounted component provides (MCP Apps app-provided tools): listed beside the transcript, each with a
// form through which the person, standing in for the model, calls it on the component.
import { html } from 'htm/preact';
import { useRef } from 'preact/hooks';
import { askApproval } from './approvals.js';
import { useCell } from './cell.js';
import { exampleArgs, modelView, obj, parseArgs, pretty, str, type JsonObject } from './json.js';
import { setStatus } from './state.js';
import { addTranscript } from './transcript.js';
import { appToolsChanged, instances, type Widget } from './widget.js';

function AppTool({ w, t }: { w: Widget; t: JsonObject }) {
  const owner = w.o.tool.name;
  const name = String(t.name);
  const description = str(t.description);
  const args = useRef<HTMLTextAreaElement>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    let parsed: JsonObject;
    try {
      parsed = parseArgs(args.current!.value);
    } catch (err) {
      return setStatus((err as Error).message, 'error');
    }
    if (
      obj(t.annotations).destructiveHint === true &&
      !(await askApproval(w.o.turn, `The model wants to call '${name}' of the component, which may delete or overwrite data.`, parsed))
    )
      return addTranscript('cancel', `Denied: ${name} (tool of the ${owner} component)`);
    addTranscript('call', `Tool call: ${name} (tool of the ${owner} component)`, parsed);
    try {
      addTranscript('result', `Result of ${name}`, modelView(await w.callAppTool(name, parsed)));
    } catch (err) {
      addTranscript('error', `The call of ${name} failed`, (err as Error).message);
    }
  };
  return html`<details class="tool app-tool" data-tool=${name} data-widget-session=${w.sessionId}>
    <summary><code>${name}</code> <span class="badge">${owner} component</span></summary>
    ${description && html`<p>${description}</p>`}
    <form class="call-form" onSubmit=${submit}>
      <label
        >Arguments (JSON)<textarea
          name="arguments"
          rows="3"
          cols="30"
          aria-label=${`Arguments of ${name}`}
          ref=${args}
          defaultValue=${pretty(exampleArgs(t.inputSchema))}
        />
      </label>
      <button type="submit">Call ${name}</button>
    </form>
    <details>
      <summary>Descriptor</summary>
      <pre>${pretty(t)}</pre>
    </details>
  </details>`;
}

/** The tools of every mounted component that provides some; hidden while there are none. */
export function AppTools() {
  useCell(appToolsChanged);
  const tools = [...instances].flatMap((w) => w.appTools.map((t) => ({ w, t })));
  return html`<section id="app-tools" aria-label="Tools of the components" hidden=${tools.length === 0}>
    <h2>Tools of the components</h2>
    <p class="muted">Tools a mounted component provides (MCP Apps app-provided tools): the model may call them.</p>
    <div class="app-tools-list">
      ${tools.map(({ w, t }) => html`<${AppTool} key=${`${w.sessionId}:${String(t.name)}`} w=${w} t=${t} />`)}
    </div>
  </section>`;
}
