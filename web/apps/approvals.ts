// Approval prompts for destructive tools. A prompt never blocks a component: it only waits for the user's
// answer. It stays where the user can press it: in its turn while nothing covers the page, in the dock above
// every frame and modal while a frame is fullscreen or picture-in-picture or a modal is open.
import { html } from 'htm/preact';
import { Cell, useCell } from './cell.js';
import { pretty, rid } from './json.js';

export interface Approval {
  id: string;
  turnKey: string;
  title: string;
  text: string;
  args: unknown;
  answer(ok: boolean): void;
}

export const approvals = new Cell<Approval[]>([]);
/** Whether the user has a prompt to answer. */
export const approvalPending = () => approvals.get().length > 0;

/** Asks the user; resolves with their answer. */
export function askApproval(turn: { key: string; title: string }, text: string, args: unknown): Promise<boolean> {
  return new Promise((resolve) => {
    const a: Approval = {
      id: rid('appr'),
      turnKey: turn.key,
      title: turn.title,
      text,
      args,
      answer: (ok) => {
        approvals.update((list) => list.filter((x) => x !== a));
        resolve(ok);
      },
    };
    approvals.update((list) => [...list, a]);
  });
}

/** What covers the page now (frames fullscreen or picture-in-picture, modals, the file picker), by token. */
export const covers = new Cell<ReadonlySet<string>>(new Set());
/** Marks (or unmarks) something as covering the page. */
export function setCover(token: string, on: boolean) {
  if (covers.get().has(token) === on) return;
  const next = new Set(covers.get());
  if (on) next.add(token);
  else next.delete(token);
  covers.set(next);
}

function ApprovalBar({ a }: { a: Approval }) {
  return html`<div class="approval" role="alertdialog" aria-label="Approval" data-turn=${a.turnKey}>
    <p><strong>${a.title}: </strong>${a.text}</p>
    <pre>${pretty(a.args)}</pre>
    <button type="button" class="approve" onClick=${() => a.answer(true)}>Approve</button>${' '}
    <button type="button" onClick=${() => a.answer(false)}>Deny</button>
  </div>`;
}

/** A turn's pending prompts, while nothing covers the page. */
export function TurnApprovals({ turnKey }: { turnKey: string }) {
  const list = useCell(approvals);
  const covered = useCell(covers).size > 0;
  if (covered) return null;
  return html`${list.filter((a) => a.turnKey === turnKey).map((a) => html`<${ApprovalBar} key=${a.id} a=${a} />`)}`;
}

/** Every pending prompt, floating above frames and modals while something covers the page. */
export function ApprovalDock() {
  const list = useCell(approvals);
  const covered = useCell(covers).size > 0;
  return html`<div id="approval-dock" role="region" aria-label="Approvals">
    ${covered && list.map((a) => html`<${ApprovalBar} key=${a.id} a=${a} />`)}
  </div>`;
}
