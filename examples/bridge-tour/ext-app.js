// A component written against the MCP Apps standard only: the @modelcontextprotocol/ext-apps App class.
import { App } from '@modelcontextprotocol/ext-apps';

const state = (window.__extApp = { input: null, result: null, context: null, cancelled: null, teardown: false, errors: [] });
const $ = (id) => document.getElementById(id);
const show = () => {
  $('input').textContent = JSON.stringify(state.input);
  $('result').textContent = JSON.stringify(state.result?.structuredContent ?? null);
  $('context').textContent = JSON.stringify({
    theme: state.context?.theme,
    displayMode: state.context?.displayMode,
    locale: state.context?.locale,
  });
};
const app = new App({ name: 'ext-apps demo', version: '1.0.0' }, { availableDisplayModes: ['inline', 'fullscreen'] });
app.ontoolinput = (p) => ((state.input = p.arguments), show());
app.ontoolresult = (r) => ((state.result = r), show());
app.ontoolcancelled = (p) => ((state.cancelled = p.reason), show());
app.onhostcontextchanged = () => ((state.context = app.getHostContext()), show());
app.onteardown = async () => ((state.teardown = true), {});
// A tool the component provides (MCP Apps app-provided tools): the host lists it beside the transcript.
app.registerTool('current_greeting', { description: 'Returns the greeting the component shows.' }, async () => ({
  content: [{ type: 'text', text: state.result?.structuredContent?.echo ?? 'none yet' }],
  structuredContent: { greeting: state.result?.structuredContent?.echo ?? null },
}));
state.app = app;
app
  .connect()
  .then(() => {
    state.context = app.getHostContext();
    state.connected = true;
    show();
  })
  .catch((err) => state.errors.push(String(err)));
