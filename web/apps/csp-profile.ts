// The CSP profile control of the host page and its report: which profile the next components get (the strict
// MCP Apps default, or the reference host's lenient policy), and, per app, what its components needed that the
// strict profile refuses, from the violations the sandbox proxy relays. Under the lenient profile the strict policy
// is sent report-only, so a builder sees "works here, breaks in a strict host" without leaving the page.

import type { SandboxViolation } from './sandbox-frame.js';

export type CspProfile = 'strict' | 'lenient';
const ITEM = 'standin.cspProfile';
const isProfile = (v: unknown): v is CspProfile => v === 'strict' || v === 'lenient';

let profile: CspProfile = ((): CspProfile => {
  const chosen = sessionStorage.getItem(ITEM);
  if (isProfile(chosen)) return chosen;
  return isProfile(document.body.dataset.cspProfile) ? document.body.dataset.cspProfile : 'strict';
})();

/** The profile components rendered from now on get. */
export function currentCspProfile(): CspProfile {
  return profile;
}

/** The header control (`#csp-profile`); a change applies to the next rendering (Re-render a turn to see it). */
export function cspProfileControl(): HTMLLabelElement {
  const select = document.createElement('select');
  select.id = 'csp-profile';
  select.setAttribute('aria-label', 'CSP profile of the components');
  for (const [value, label] of [
    ['strict', 'strict (MCP Apps default)'],
    ['lenient', 'lenient (reference host)'],
  ]) {
    const o = document.createElement('option');
    o.value = value;
    o.textContent = label;
    select.append(o);
  }
  select.value = profile;
  select.addEventListener('change', () => {
    if (!isProfile(select.value)) return;
    profile = select.value;
    sessionStorage.setItem(ITEM, profile);
  });
  const label = document.createElement('label');
  label.title = 'Applies to components rendered from now on; Re-render a turn to apply it there.';
  label.append('CSP ', select);
  return label;
}

const KEYWORDS: Record<string, string> = { eval: "'unsafe-eval'", 'wasm-eval': "'wasm-unsafe-eval'", inline: "'unsafe-inline'" };

/** The source that would allow a blocked thing: a keyword, a scheme, or the URL's origin. */
function sourceOf(blockedURI: string): string {
  if (KEYWORDS[blockedURI]) return KEYWORDS[blockedURI];
  if (/^(https?|wss?):/i.test(blockedURI)) {
    try {
      return new URL(blockedURI).origin;
    } catch {
      return blockedURI;
    }
  }
  const scheme = /^([a-z][a-z0-9+.-]*)(:|$)/i.exec(blockedURI);
  return scheme ? `${scheme[1].toLowerCase()}:` : blockedURI || '(unknown)';
}

interface Need {
  directive: string;
  source: string;
  blocked: boolean;
}
/** Per app (tool and template), its needs by `directive source`. */
const needs = new Map<string, { tool: string; uri: string; items: Map<string, Need> }>();
const list = document.createElement('ul');
/** The report pane (`#csp-needs`): hidden until a component needs something the strict profile refuses. */
export const cspNeedsPane = document.createElement('section');
cspNeedsPane.id = 'csp-needs';
cspNeedsPane.hidden = true;
cspNeedsPane.setAttribute('aria-label', 'CSP needs of the components');
{
  const title = document.createElement('h2');
  title.textContent = 'Beyond the strict CSP';
  const intro = document.createElement('p');
  intro.className = 'muted';
  intro.textContent =
    'What components needed that the strict profile (the MCP Apps default) refuses. "refused here": the component broke in this host; "works here": it works under the lenient profile and breaks in a strict host.';
  cspNeedsPane.append(title, intro, list);
}

/** Records a violation the sandbox proxy relayed for a component of `tool` (template `uri`) and shows it. */
export function recordCspViolation(tool: string, uri: string, v: SandboxViolation) {
  const directive = v.effectiveDirective.replace(/-(elem|attr)$/, '');
  const source = sourceOf(v.blockedURI);
  const app = needs.get(uri) ?? { tool, uri, items: new Map<string, Need>() };
  needs.set(uri, app);
  const key = `${directive} ${source}`;
  const had = app.items.get(key);
  const blocked = v.disposition === 'enforce' || (had?.blocked ?? false);
  if (had && had.blocked === blocked) return;
  app.items.set(key, { directive, source, blocked });
  render();
}

function render() {
  list.textContent = '';
  for (const app of needs.values()) {
    const li = document.createElement('li');
    li.dataset.uri = app.uri;
    const head = document.createElement('strong');
    head.textContent = `${app.tool} `;
    const code = document.createElement('code');
    code.textContent = app.uri;
    const items = document.createElement('ul');
    for (const n of app.items.values()) {
      const item = document.createElement('li');
      item.dataset.directive = n.directive;
      item.dataset.source = n.source;
      item.dataset.blocked = String(n.blocked);
      const c = document.createElement('code');
      c.textContent = `${n.directive} ${n.source}`;
      item.append(c, n.blocked ? ' — refused here' : ' — works here, a strict host refuses it');
      items.append(item);
    }
    li.append(head, code, items);
    list.append(li);
  }
  cspNeedsPane.hidden = needs.size === 0;
}
