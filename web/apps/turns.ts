// The conversation: one turn per tool call, with its status, its approval prompts, a sign-in challenge, and the
// component (or the plain result).
import { html } from 'htm/preact';
import type { ToolEntry } from '../../src/apps/host/wire.js';
import { TurnApprovals } from './approvals.js';
import { Cell, useCell } from './cell.js';
import { MODES } from './display.js';
import { FrameBox } from './frame-box.js';
import { arr, descriptor, modelView, obj, pretty, rid, type ToolDescriptor, type ToolResult } from './json.js';
import { createWidget } from './mount.js';
import type { StatusLine } from './state.js';
import type { TurnRef, Widget } from './widget.js';

interface TurnState {
  status: StatusLine;
  /** The WWW-Authenticate challenges of a result (mcp/www_authenticate). */
  challenge: string[] | null;
  /** A result shown as JSON (the tool has no template). */
  plain: ToolResult | null;
  widget: Widget | null;
}

/** One tool call of the conversation. */
export class Turn implements TurnRef {
  readonly key = rid('turn');
  readonly tool: ToolDescriptor;
  readonly state = new Cell<TurnState>({ status: { text: '', kind: 'info' }, challenge: null, plain: null, widget: null });
  private lastInit: { toolInput: unknown; result?: ToolResult } = { toolInput: null };

  constructor(readonly entry: ToolEntry) {
    this.tool = descriptor(entry.descriptor);
  }

  get title() {
    return this.tool.title ?? this.tool.name;
  }

  private patch(changed: Partial<TurnState>) {
    this.state.set({ ...this.state.get(), ...changed });
  }

  setStatus(text: string, kind: StatusLine['kind'] = 'info') {
    this.patch({ status: { text, kind } });
  }

  showChallenge(result: ToolResult) {
    const c = obj(result._meta)['mcp/www_authenticate'];
    if (c) this.patch({ challenge: (Array.isArray(c) ? arr(c) : [c]).map(String) });
  }

  showPlain(result: ToolResult) {
    this.patch({ plain: result });
  }

  /** Renders the tool's component; null when it could not be rendered (the status says why). */
  async mount(init: { toolInput: unknown; result?: ToolResult }): Promise<Widget | null> {
    this.lastInit = init;
    const w = createWidget({
      turn: this,
      entry: this.entry,
      tool: this.tool,
      uri: null,
      view: { mode: 'inline', params: null },
      toolInput: init.toolInput,
      result: init.result,
    });
    try {
      await w.mount();
    } catch (err) {
      this.setStatus(`Could not render the component: ${(err as Error).message}`, 'error');
      return null;
    }
    this.patch({ widget: w });
    return w;
  }

  /** Tears the component down and renders it again with what it had (a new widgetSessionId). */
  async rerender() {
    const w = this.state.get().widget;
    const init = { toolInput: w ? w.globals.toolInput : this.lastInit.toolInput, result: w?.result ?? this.lastInit.result };
    if (w) await w.teardown('re-render');
    await this.mount(init);
  }
}

export const turns = new Cell<Turn[]>([]);

/** Starts a turn at the end of the conversation. */
export function startTurn(entry: ToolEntry): Turn {
  const t = new Turn(entry);
  turns.update((l) => [...l, t]);
  return t;
}

function TurnView({ t }: { t: Turn }) {
  const s = useCell(t.state);
  const w = s.widget;
  return html`<article class="turn" data-tool=${t.tool.name} data-turn=${t.key}>
    <h3>${t.title}</h3>
    <p class="turn-status" role="status" data-kind=${s.status.kind}>${s.status.text}</p>
    <${TurnApprovals} turnKey=${t.key} />
    ${
      s.challenge &&
      html`<div class="challenge" role="alert">
        <strong>Sign-in required</strong>
        <p>The tool asks for OAuth (WWW-Authenticate):</p>
        ${s.challenge.map((x) => html`<pre>${x}</pre>`)}
      </div>`
    }
    <div class="turn-body">
      ${
        w &&
        html`<div class="turn-controls">
          ${MODES.map((m) => html`<button type="button" data-mode=${m} onClick=${() => s.widget?.setDisplayMode(m, 'host')}>${m}</button>`)}
          <button type="button" class="rerender" onClick=${() => void t.rerender()}>Re-render</button>
        </div>`
      }
      ${w && html`<${FrameBox} key=${w.sessionId} w=${w} />`}
      ${s.plain && html`<pre class="plain-result">${pretty(modelView(s.plain))}</pre>`}
    </div>
  </article>`;
}

/** The conversation pane. */
export function Conversation() {
  const list = useCell(turns);
  return html`<section id="conversation" aria-label="Conversation">${list.map((t) => html`<${TurnView} key=${t.key} t=${t} />`)}</section>`;
}
