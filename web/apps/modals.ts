// Host modals a component opens (requestModal): each holds another component of the same server, above the page.
import { html } from 'htm/preact';
import { setCover } from './approvals.js';
import { Cell, useCell } from './cell.js';
import { FrameBox } from './frame-box.js';
import { Pickers } from './picker.js';
import type { Widget } from './widget.js';

interface OpenModal {
  id: string;
  widget: Widget;
}
const modals = new Cell<OpenModal[]>([]);

/** Shows a mounted modal component. */
export function addModal(id: string, widget: Widget) {
  modals.update((l) => [...l, { id, widget }]);
  setCover(id, true);
}

/** Removes a modal (its component was torn down). */
export function removeModal(id: string) {
  modals.update((l) => l.filter((m) => m.id !== id));
  setCover(id, false);
}

function Modal({ m }: { m: OpenModal }) {
  return html`<div class="modal" role="dialog" aria-modal="true" aria-label="Component modal">
    <div class="modal-head">
      <strong>Modal</strong>
      <button type="button" class="modal-close" onClick=${() => void m.widget.close('the user closed the modal')}>Close</button>
    </div>
    <div class="modal-body"><${FrameBox} w=${m.widget} /></div>
  </div>`;
}

/** The modal layer: component modals and the file picker. */
export function ModalRoot() {
  const list = useCell(modals);
  return html`<div id="modal-root">${list.map((m) => html`<${Modal} key=${m.id} m=${m} />`)}<${Pickers} /></div>`;
}
