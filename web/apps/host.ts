// The app host page: connects to an MCP server (through Standin), lists tools with lint findings, calls them the
// way the model would, renders their components on the widget origin and speaks both the `window.<vendor>`
// bridge protocol (over a MessagePort) and MCP Apps JSON-RPC (over postMessage) with them. This file lays the
// page out and runs a deep link (`?server=…&tool=…&args=…`); each concern has its own file.
import { html } from 'htm/preact';
import { render } from 'preact';
import { needsKey, KEY_ITEM, signInShown } from './api.js';
import { AppTools } from './app-tools.js';
import { ApprovalDock } from './approvals.js';
import { useCell } from './cell.js';
import { CspNeeds } from './csp-profile.js';
import { connect, keyGiven, lastConnect, serverText } from './connection.js';
import { Header } from './header.js';
import { obj } from './json.js';
import { ModalRoot } from './modals.js';
import { callAsModel } from './model-call.js';
import { settings } from './settings.js';
import { exposeForInspection, setStatus, status, timings } from './state.js';
import { ToolList } from './tools.js';
import { TranscriptEntries } from './transcript.js';
import { Conversation } from './turns.js';
import { instances } from './widget.js';

function StatusLine() {
  const s = useCell(status);
  return html`<p id="status" role="status" data-kind=${s.kind}>${s.text}</p>`;
}

function Page() {
  return html`<${Header} />
    <${StatusLine} />
    <main>
      <${ToolList} />
      <${Conversation} />
      <aside id="transcript" aria-label="Transcript">
        <${AppTools} />
        <${CspNeeds} />
        <${TranscriptEntries} />
      </aside>
    </main>
    <${ModalRoot} />
    <${ApprovalDock} />`;
}

/** Runs the deep link once the page works (and, off loopback, once the admin key is given). */
async function boot() {
  // Interactive: the page is built and its controls work (a deep link's call may still be running).
  timings.interactiveAt = performance.now();
  document.body.dataset.interactive = 'true';
  if (needsKey && !sessionStorage.getItem(KEY_ITEM)) {
    signInShown.set(true);
    setStatus('Enter the admin key of this Standin to use the host.');
    await keyGiven();
  }
  const q = new URLSearchParams(location.search);
  const server = q.get('server');
  if (server) {
    serverText.set(server);
    let connected = await connect(server);
    // A deep link waits for the right key: each new key retries it.
    while (!connected && needsKey && lastConnect.status === 401) {
      await keyGiven();
      connected = await connect(server);
    }
    const tool = q.get('tool');
    if (connected && tool) {
      let args: Record<string, unknown>;
      try {
        args = obj(JSON.parse(q.get('args') || '{}'));
      } catch (err) {
        setStatus(`The args parameter is not JSON: ${(err as Error).message}`, 'error');
        return;
      }
      // Not awaited: an approval-gated call waits for the user.
      void callAsModel(tool, args);
    }
  }
  document.body.dataset.ready = 'true';
}

const root = document.getElementById('app')!;
root.removeAttribute('aria-busy');
root.textContent = '';
document.documentElement.dataset.theme = settings.theme;
render(html`<${Page} />`, root);
exposeForInspection(instances);
addEventListener('resize', () => {
  for (const w of instances) w.resized();
});
void boot();
