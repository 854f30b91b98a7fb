// The CSP profile control of the host page and its report: which profile the next components get (the strict
// MCP Apps default, or the reference host's lenient policy), and, per app, what its components needed that the
// strict profile refuses, from the violations the sandbox proxy relays. Under the lenient profile the strict policy
// is sent report-only, so a builder sees "works here, breaks in a strict host" without leaving the page.
import { html } from 'htm/preact';
import { Cell, useCell } from './cell.js';
import type { SandboxViolation } from './sandbox-frame.js';

export type CspProfile = 'strict' | 'lenient';
const ITEM = 'standin.cspProfile';
const isProfile = (v: unknown): v is CspProfile => v === 'strict' || v === 'lenient';

const profile = new Cell<CspProfile>(
  ((): CspProfile => {
    const chosen = sessionStorage.getItem(ITEM);
    if (isProfile(chosen)) return chosen;
    const served = document.body.dataset.cspProfile;
    return isProfile(served) ? served : 'strict';
  })(),
);

/** The profile components rendered from now on get. */
export function currentCspProfile(): CspProfile {
  return profile.get();
}

/** The header control (`#csp-profile`); a change applies to the next rendering (Re-render a turn to see it). */
export function CspProfileControl() {
  const value = useCell(profile);
  const changed = (e: Event) => {
    const v = (e.currentTarget as HTMLSelectElement).value;
    if (!isProfile(v)) return;
    sessionStorage.setItem(ITEM, v);
    profile.set(v);
  };
  return html`<label title="Applies to components rendered from now on; Re-render a turn to apply it there."
    >CSP
    <select id="csp-profile" aria-label="CSP profile of the components" value=${value} onChange=${changed}>
      <option value="strict">strict (MCP Apps default)</option>
      <option value="lenient">lenient (reference host)</option>
    </select></label
  >`;
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
interface AppNeeds {
  tool: string;
  uri: string;
  items: Need[];
}
/** Per app (template), what its components needed beyond the strict profile. */
const needs = new Cell<AppNeeds[]>([]);

/** Records a violation the sandbox proxy relayed for a component of `tool` (template `uri`). */
export function recordCspViolation(tool: string, uri: string, v: SandboxViolation) {
  // An empty function compiled to probe for eval (libraries fall back without it): no need.
  if (v.blockedURI === 'eval' && /^\(function anonymous\([^)]*\)\s*\{\s*\}\)$/.test(v.sample ?? '')) return;
  const need: Need = {
    directive: v.effectiveDirective.replace(/-(elem|attr)$/, ''),
    source: sourceOf(v.blockedURI),
    blocked: v.disposition === 'enforce',
  };
  const apps = needs.get();
  const app = apps.find((a) => a.uri === uri);
  const had = app?.items.find((n) => n.directive === need.directive && n.source === need.source);
  if (had && (had.blocked || !need.blocked)) return;
  const items = [...(app?.items ?? []).filter((n) => n !== had), { ...need, blocked: need.blocked || (had?.blocked ?? false) }];
  needs.set([...apps.filter((a) => a !== app), { tool, uri, items }]);
}

/** The report pane (`#csp-needs`) beside the transcript: hidden until a component needs what strict refuses. */
export function CspNeeds() {
  const apps = useCell(needs);
  return html`<section id="csp-needs" aria-label="CSP needs of the components" hidden=${apps.length === 0}>
    <h2>Beyond the strict CSP</h2>
    <p class="muted">
      What components needed that the strict profile (the MCP Apps default) refuses. "refused here": the component broke in this host;
      "works here": it works under the lenient profile and breaks in a strict host.
    </p>
    <ul>
      ${apps.map(
        (a) =>
          html`<li key=${a.uri} data-uri=${a.uri}>
            <strong>${a.tool}</strong> <code>${a.uri}</code>
            <ul>
              ${a.items.map(
                (n) =>
                  html`<li
                    key=${`${n.directive} ${n.source}`}
                    data-directive=${n.directive}
                    data-source=${n.source}
                    data-blocked=${String(n.blocked)}
                  >
                    <code>${n.directive} ${n.source}</code>${n.blocked ? ' — refused here' : ' — works here, a strict host refuses it'}
                  </li>`,
              )}
            </ul>
          </li>`,
      )}
    </ul>
  </section>`;
}
