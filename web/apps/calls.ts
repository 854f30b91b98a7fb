// Tool calls a component makes (window.<vendor>.callTool, MCP Apps tools/call): visibility checked by Standin,
// destructive tools approved by the user first, both recorded in the transcript.
import { callTool } from './api.js';
import { askApproval } from './approvals.js';
import { descriptor, modelView, obj, type JsonObject, type ToolResult } from './json.js';
import { clientMeta } from './settings.js';
import { connection } from './state.js';
import { addTranscript } from './transcript.js';
import type { Widget } from './widget.js';

/** Calls a server tool for the component; resolves with the result carrying the component's widgetSessionId. */
export async function callFromComponent(w: Widget, name: string, args: JsonObject): Promise<ToolResult> {
  const conn = connection.get();
  if (!conn) throw new Error('not connected');
  const entry = conn.tools.find((t) => descriptor(t.descriptor).name === name);
  if (entry && !entry.visibility.app) throw new Error(`the tool '${name}' is not callable from the component (visibility)`);
  if (entry && descriptor(entry.descriptor).annotations?.destructiveHint === true) {
    const ok = await askApproval(w.o.turn, `The component wants to call '${name}', which may delete or overwrite data.`, args);
    if (!ok) throw new Error('the user denied the call');
  }
  addTranscript('call', `Tool call from the component: ${name}`, args);
  const result: ToolResult = obj(
    (await callTool({ connection: conn.id, name, arguments: args, _meta: clientMeta(), caller: 'app' })).result,
  );
  addTranscript('result', `Result of ${name}`, modelView(result));
  return w.withSession(result);
}

/** Whether a URL may be opened for a component: absolute http(s) only. */
export const isWebUrl = (v: unknown): v is string => typeof v === 'string' && /^https?:\/\//i.test(v);

/** Whether a URL is on one of the redirect domains a template declared (`https://*.shop.example`). */
export function originMatches(url: URL, domain: string) {
  const m = /^([a-z][a-z0-9+.-]*):\/\/(\*\.)?([^/:]+)(:\d+)?\/?$/i.exec(domain);
  if (!m || `${m[1].toLowerCase()}:` !== url.protocol) return false;
  if ((m[4] ? m[4].slice(1) : '') !== url.port) return false;
  return m[2] ? url.hostname.endsWith(`.${m[3].toLowerCase()}`) : url.hostname === m[3].toLowerCase();
}

/** Opens a link for the component in a new browser tab; recorded as a host event. */
export function openLink(w: Widget, url: string) {
  w.patchView({ lastExternal: url });
  addTranscript('link', 'Opened in the browser', url);
  window.open(url, '_blank', 'noopener,noreferrer');
}
