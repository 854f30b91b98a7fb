import { useState } from 'preact/hooks';
import { api, setBinding } from '../api.js';
import type { Session } from '../../../src/dashboard/wire.js';
import { html } from '../ui.js';

/** Sign in with the admin key (the banner's one-time link signs in without this page). */
export function SignIn({ onDone, expired }: { onDone: () => void; expired: boolean }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(expired ? 'That sign-in link has been used or has expired. Sign in with the admin key.' : '');
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      setBinding((await api<Session>('POST', '/dashboard/session', { admin_key: key })).binding_token);
      history.replaceState(null, '', location.pathname);
      onDone();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return html`<main class="signin" id="main">
    <h1>Standin</h1>
    <p>Open the <strong>dashboard link</strong> the banner printed at start, or sign in with the admin key.</p>
    <form onSubmit=${submit}>
      <label for="admin-key">Admin key</label>
      <input
        id="admin-key"
        type="password"
        autocomplete="current-password"
        required
        value=${key}
        onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)}
      />
      <button type="submit" class="primary">Sign in</button>
    </form>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <p class="hint">A script can mint a new link: <code>POST /admin/v1/dashboard/sign_in_links</code>.</p>
  </main>`;
}
