// A tool call made the way the model would make it: transcript, approval for destructive tools (the component
// renders meanwhile with toolInput null), the call, then the component with the result.
import { callTool, prefetch } from './api.js';
import { askApproval } from './approvals.js';
import { warmFrame } from './frame.js';
import { descriptor, modelView, obj, str, type JsonObject, type ToolResult } from './json.js';
import { clientMeta, V } from './settings.js';
import { connection, now, setStatus, timings } from './state.js';
import { addTranscript } from './transcript.js';
import { startTurn } from './turns.js';
import type { Widget } from './widget.js';

/** Calls a tool as the model: a new turn, the approval if the tool is destructive, then its component. */
export async function callAsModel(name: string, args: JsonObject) {
  const conn = connection.get();
  if (!conn) return setStatus('Connect to a server first.', 'error');
  const entry = conn.tools.find((t) => descriptor(t.descriptor).name === name);
  if (!entry) return setStatus(`The server has no tool '${name}'.`, 'error');
  const url = new URL(location.href);
  url.search = new URLSearchParams({ server: conn.server, tool: name, args: JSON.stringify(args) }).toString();
  history.replaceState(null, '', url);
  const turn = startTurn(entry);
  const meta = turn.tool._meta ?? {};
  addTranscript('call', `Tool call: ${name}`, args);
  let widget: Widget | null = null;
  if (turn.tool.annotations?.destructiveHint === true) {
    // The prompt exists before the component loads; the component is answered meanwhile (approvals never block it).
    const approval = askApproval(turn, `'${name}' may delete or overwrite data. The host asks before calling it.`, args);
    if (entry.templateUri) widget = await turn.mount({ toolInput: null });
    if (!(await approval)) {
      turn.setStatus('Denied: the tool was not called.');
      widget?.cancelled('the user denied the call');
      addTranscript('cancel', `Denied: ${name}`);
      return;
    }
    widget?.deliverInput(args);
  }
  turn.setStatus(str(meta[V('toolInvocation/invoking')]) ?? `Calling ${name}…`);
  // The template is read while the tool runs (MCP Apps lets hosts prefetch), off the result → render path.
  let unwarm = () => {};
  let rendered = false;
  if (entry.templateUri && !widget)
    void prefetch({ connection: conn.id, tool: name }).then(
      (p) => {
        if (!rendered) unwarm = warmFrame(p.origin);
      },
      () => undefined,
    );
  let result: ToolResult;
  try {
    result = obj((await callTool({ connection: conn.id, name, arguments: args, _meta: clientMeta(), caller: 'model' })).result);
  } catch (err) {
    turn.setStatus(`Failed: ${(err as Error).message}`, 'error');
    widget?.cancelled((err as Error).message);
    rendered = true;
    unwarm();
    return;
  }
  timings.resultAt = now();
  turn.setStatus(str(meta[V('toolInvocation/invoked')]) ?? `Called ${name}.`);
  addTranscript('result', `Result of ${name}`, modelView(result));
  turn.showChallenge(result);
  if (!entry.templateUri) return turn.showPlain(result);
  if (widget) widget.deliverResult(result);
  else await turn.mount({ toolInput: args, result });
  rendered = true;
  unwarm();
}
