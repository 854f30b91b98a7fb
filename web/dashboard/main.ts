import 'uplot/dist/uPlot.min.css';
import '../shared/look.css';
import './style.css';
import { render, type FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Session } from '../../src/dashboard/wire.js';
import { api, onSignedOut, setBinding } from './api.js';
import { FindById } from './search.js';
import { interceptLinks, useLocation } from './router.js';
import { html } from './ui.js';
import { Overview } from './pages/overview.js';
import { Requests } from './pages/requests.js';
import { Webhooks } from './pages/webhooks.js';
import { RateLimits } from './pages/ratelimits.js';
import { Runs } from './pages/runs.js';
import { Responses } from './pages/responses.js';
import { Identity } from './pages/identity.js';
import { Files } from './pages/files.js';
import { Containers } from './pages/containers.js';
import { SignIn } from './pages/signin.js';
import { NAV_PAGES, THEME_KEY } from './nav.js';

const VIEWS: Record<string, FunctionComponent> = {
  overview: Overview,
  requests: Requests,
  webhooks: Webhooks,
  runs: Runs,
  responses: Responses,
  files: Files,
  containers: Containers,
  'rate-limits': RateLimits,
  identity: Identity,
};
const PAGES = NAV_PAGES.map((p) => ({ ...p, view: VIEWS[p.id] }));

type Theme = 'light' | 'dark' | 'auto';
function applyTheme(t: Theme) {
  if (t === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
}

function App() {
  // Optimistic: the page renders and loads its data while the session is checked; a 401 from either
  // shows the sign-in page (saves a round trip before anything appears).
  const [signedIn, setSignedIn] = useState<boolean>(true);
  const [theme, setTheme] = useState<Theme>((localStorage.getItem(THEME_KEY) as Theme) || 'auto');
  const loc = useLocation();
  useEffect(() => {
    onSignedOut(() => setSignedIn(false));
    api<Session>('GET', '/dashboard/session').then(
      (s) => setSignedIn(s.signed_in),
      () => setSignedIn(false),
    );
  }, []);
  useEffect(() => {
    applyTheme(theme);
    localStorage.setItem(THEME_KEY, theme);
  }, [theme]);
  const page = PAGES.find((p) => p.id === loc.page);
  useEffect(() => {
    document.title = `${page?.title ?? 'Not found'} · Standin`;
  }, [page]);
  if (!signedIn) return html`<${SignIn} onDone=${() => setSignedIn(true)} expired=${loc.query.get('sign_in') === 'expired'} />`;
  const next: Theme = theme === 'auto' ? 'dark' : theme === 'dark' ? 'light' : 'auto';
  const signOut = async () => {
    await api('DELETE', '/dashboard/session');
    setBinding(null);
    setSignedIn(false);
  };
  return html`
    <a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <a class="brand" href="/dashboard">Standin</a>
      <nav aria-label="Pages">
        <ul>
          ${PAGES.map((p) => html`<li><a href=${`/dashboard/${p.id}`} aria-current=${p === page ? 'page' : undefined}>${p.title}</a></li>`)}
          <li><a href="/apps">App host ↗</a></li>
        </ul>
      </nav>
      <${FindById} />
      <div class="tools">
        <button type="button" onClick=${() => setTheme(next)} aria-label=${`Theme: ${theme}. Switch to ${next}`}>
          ${theme === 'dark' ? '☾' : theme === 'light' ? '☀' : '◐'} <span class="wide">${theme}</span>
        </button>
        <button type="button" onClick=${signOut}>Sign out</button>
      </div>
    </header>
    <main id="main" tabindex="-1">
      ${
        page
          ? html`<${page.view} key=${`${page.id}-${loc.visit}`} />`
          : html`<h1>Not found</h1>
              <p>No page <code>${loc.page}</code>.</p>`
      }
    </main>
  `;
}

interceptLinks();
applyTheme((localStorage.getItem(THEME_KEY) as Theme) || 'auto');
// The page's boot note is not Preact's: clear it, or render() keeps it under the app.
const root = document.getElementById('app')!;
root.replaceChildren();
render(html`<${App} />`, root);
