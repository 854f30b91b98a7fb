// The file library picker (selectFiles): files already uploaded with library: true.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { LibraryFile } from '../../src/apps/host/wire.js';
import { listLibrary } from './api.js';
import { setCover } from './approvals.js';
import { Cell, useCell } from './cell.js';
import { rid } from './json.js';

type Picked = Pick<LibraryFile, 'fileId' | 'fileName' | 'mimeType'>;
interface PickRequest {
  id: string;
  files: LibraryFile[];
  done(files: LibraryFile[]): void;
}
const picks = new Cell<PickRequest[]>([]);

/** Shows the picker; resolves with the files the user selected (none on Cancel). */
export async function pickFiles(): Promise<Picked[]> {
  const { data } = await listLibrary();
  return new Promise((resolve) => {
    const req: PickRequest = {
      id: rid('pick'),
      files: data,
      done: (files) => {
        picks.update((l) => l.filter((x) => x !== req));
        setCover(req.id, false);
        resolve(files.map((f) => ({ fileId: f.fileId, fileName: f.fileName, mimeType: f.mimeType })));
      },
    };
    picks.update((l) => [...l, req]);
    setCover(req.id, true);
  });
}

function Picker({ req }: { req: PickRequest }) {
  const [checked, setChecked] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string, on: boolean) => {
    const next = new Set(checked);
    if (on) next.add(id);
    else next.delete(id);
    setChecked(next);
  };
  return html`<div class="modal picker" role="dialog" aria-label="Select files">
    <div class="modal-head"><strong>Select files from your library</strong></div>
    ${
      req.files.length
        ? html`<ul>
            ${req.files.map(
              (f) =>
                html`<li key=${f.fileId}>
                  <label
                    ><input
                      type="checkbox"
                      value=${f.fileId}
                      aria-label=${f.fileName}
                      onChange=${(e: Event) => toggle(f.fileId, (e.currentTarget as HTMLInputElement).checked)}
                    />
                    ${` ${f.fileName} (${f.mimeType})`}</label
                  >
                </li>`,
            )}
          </ul>`
        : html`<p>The library is empty.</p>`
    }
    <button type="button" class="select" onClick=${() => req.done(req.files.filter((f) => checked.has(f.fileId)))}>Select</button>${' '}
    <button type="button" onClick=${() => req.done([])}>Cancel</button>
  </div>`;
}

/** Every open picker. */
export function Pickers() {
  const list = useCell(picks);
  return html`${list.map((r) => html`<${Picker} key=${r.id} req=${r} />`)}`;
}
