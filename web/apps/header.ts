// The page's header: the dashboard's top bar, the server field, theme, locale and CSP profile, the client metadata
// and the admin key form.
import { html } from 'htm/preact';
import { useRef, useState } from 'preact/hooks';
import { NAV_PAGES } from '../dashboard/nav.js';
import { KEY_ITEM, signInShown } from './api.js';
import { useCell } from './cell.js';
import { connect, connecting, serverText, signInWith } from './connection.js';
import { CspProfileControl } from './csp-profile.js';
import { settings, type Theme } from './settings.js';
import { instances } from './widget.js';

/** The dashboard's header: its brand and pages, the host marked as the current one. */
function TopBar() {
  return html`<div class="top">
    <a class="brand" href="/dashboard">Standin</a>
    <nav aria-label="Pages">
      <ul>
        ${NAV_PAGES.map((p) => html`<li><a href=${`/dashboard/${p.id}`}>${p.title}</a></li>`)}
        <li><a href="/apps" aria-current="page">App host</a></li>
      </ul>
    </nav>
  </div>`;
}

/** A client metadata field; a value that does not parse marks the field invalid and keeps the old one. */
function Field({ name, label, get, set }: { name: string; label: string; get: () => string; set: (v: string) => void }) {
  const [invalid, setInvalid] = useState(false);
  const change = (e: Event) => {
    try {
      set((e.currentTarget as HTMLInputElement).value);
      setInvalid(false);
    } catch {
      setInvalid(true);
    }
  };
  return html`<label
    >${label} <input name=${name} defaultValue=${get()} size="40" aria-invalid=${invalid ? 'true' : undefined} onChange=${change}
  /></label>`;
}

function ClientMeta() {
  return html`<details id="client-meta">
    <summary>Client metadata</summary>
    <${Field} name="userAgent" label="User agent" get=${() => settings.userAgent} set=${(v: string) => (settings.userAgent = v)} />
    <${Field}
      name="userLocation"
      label="User location (JSON)"
      get=${() => JSON.stringify(settings.userLocation)}
      set=${(v: string) => (settings.userLocation = JSON.parse(v))}
    />
    <${Field} name="subject" label="Subject" get=${() => settings.subject} set=${(v: string) => (settings.subject = v)} />
    <${Field} name="session" label="Session" get=${() => settings.session} set=${(v: string) => (settings.session = v)} />
    <${Field}
      name="organization"
      label="Organization"
      get=${() => settings.organization}
      set=${(v: string) => (settings.organization = v)}
    />
  </details>`;
}

function SignIn() {
  const shown = useCell(signInShown);
  const key = useRef<HTMLInputElement>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    const value = key.current!.value;
    key.current!.value = '';
    void signInWith(value);
  };
  const focus = (el: HTMLInputElement | null) => {
    key.current = el;
    if (el && shown && !sessionStorage.getItem(KEY_ITEM) && document.activeElement !== el) el.focus();
  };
  return html`<form id="sign-in" hidden=${!shown} onSubmit=${submit}>
    <label>Admin key <input id="admin-key" type="password" autocomplete="off" size="24" aria-label="Admin key" ref=${focus} /></label>
    <button type="submit">Sign in</button>
    <small class="muted"> Standin does not listen on loopback: the host needs its admin key (kept in this tab only).</small>
  </form>`;
}

/** Applies a theme to the page and tells every component. */
export function applyTheme(theme: Theme) {
  settings.theme = theme;
  document.documentElement.dataset.theme = theme;
  for (const w of instances) w.contextChanged({ theme });
}

export function Header() {
  const server = useCell(serverText);
  const busy = useCell(connecting);
  const [theme, setTheme] = useState(settings.theme);
  const submit = (e: Event) => {
    e.preventDefault();
    void connect(server);
  };
  const themeChanged = (e: Event) => {
    const t = (e.currentTarget as HTMLSelectElement).value as Theme;
    setTheme(t);
    applyTheme(t);
  };
  const localeChanged = (e: Event) => {
    settings.locale = (e.currentTarget as HTMLInputElement).value || 'en-US';
    for (const w of instances) w.contextChanged({ locale: settings.locale });
  };
  return html`<${TopBar} />
    <header>
      <form id="connect-form" onSubmit=${submit}>
        <strong>Standin app host</strong>
        <input
          id="server"
          type="text"
          placeholder="http://localhost:3000/mcp or a command given to standin apps open"
          aria-label="MCP server"
          size="50"
          value=${server}
          onInput=${(e: Event) => serverText.set((e.currentTarget as HTMLInputElement).value)}
        />
        <button id="connect" type="submit" disabled=${busy}>Connect</button>
      </form>
      <label
        >Theme
        <select id="theme" aria-label="Theme" value=${theme} onChange=${themeChanged}>
          <option value="light">light</option>
          <option value="dark">dark</option>
        </select></label
      >
      <label
        >Locale <input id="locale" type="text" defaultValue=${settings.locale} size="8" aria-label="Locale" onChange=${localeChanged}
      /></label>
      <${CspProfileControl} />
      <${ClientMeta} />
      <${SignIn} />
    </header>`;
}
