import { useState } from 'preact/hooks';
import type { Lookup } from '../../src/dashboard/wire.js';
import { get } from './api.js';
import { navigate } from './router.js';
import { html } from './ui.js';

/** The header's search: any id Standin issues (a request, an event's webhook-id, a run, a file …) opens its page. */
export function FindById() {
  const [id, setId] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const wanted = id.trim();
    if (!wanted) return;
    setBusy(true);
    try {
      const found = await get<Lookup>(`dashboard/lookup?id=${encodeURIComponent(wanted)}`);
      setError('');
      setId('');
      navigate(found.url);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="find" role="search" aria-label="Find by id" onSubmit=${submit}>
    <label class="sr" for="find-id">Find by id</label>
    <input
      id="find-id"
      type="search"
      placeholder="Find by id: run_…, evt_…, req_…"
      autocomplete="off"
      spellcheck=${false}
      maxlength="200"
      value=${id}
      aria-describedby=${error ? 'find-error' : undefined}
      onInput=${(e: Event) => (setId((e.target as HTMLInputElement).value), setError(''))}
    />
    <button type="submit" disabled=${busy}>Open</button>
    ${error ? html`<p id="find-error" class="find-error error" role="alert">${error}</p>` : null}
  </form>`;
}
