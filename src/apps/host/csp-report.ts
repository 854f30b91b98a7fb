import type { Finding } from '../lint/findings.js';

/** One thing a component needed that a CSP refused: `script-src` + `'unsafe-eval'`, `worker-src` + `blob:`. */
export interface CspNeed {
  directive: string;
  source: string;
  /** The policy in force refused it (the component broke here), not only the strict one sent report-only. */
  blocked: boolean;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const KEYWORDS: Record<string, string> = {
  eval: "'unsafe-eval'",
  'wasm-eval': "'wasm-unsafe-eval'",
  inline: "'unsafe-inline'",
  'trusted-types-sink': "'unsafe-inline'",
};

/**
 * Whether a refused eval only compiled an empty function: libraries probe for eval that way (`new Function("")`,
 * as the ext-apps SDK's schema library does) and fall back, so it is no need.
 */
export function evalProbe(sample: unknown): boolean {
  return typeof sample === 'string' && /^\(function anonymous\([^)]*\)\s*\{\s*\}\)$/.test(sample);
}

/**
 * The need behind one violation: the directive (`script-src-elem` counts as `script-src`) and the source that
 * would allow it (a keyword, a scheme, or the blocked URL's origin, never its path). Undefined for what is not a
 * violation report, and for an eval probe (`sample`: the start of the refused code, with `'report-sample'`).
 */
export function needOf(directive: unknown, blockedUri: unknown, disposition: unknown, sample?: unknown): CspNeed | undefined {
  if (typeof directive !== 'string' || !/^[a-z-]{1,40}$/.test(directive)) return undefined;
  const blocked = typeof blockedUri === 'string' ? blockedUri.slice(0, 2000) : '';
  if (blocked === 'eval' && evalProbe(sample)) return undefined;
  let source = KEYWORDS[blocked];
  if (!source) {
    const scheme = /^([a-z][a-z0-9+.-]*)(:|$)/i.exec(blocked);
    if (!scheme) return undefined;
    const s = scheme[1].toLowerCase();
    if (s === 'http' || s === 'https' || s === 'ws' || s === 'wss') {
      try {
        source = new URL(blocked).origin;
      } catch {
        return undefined;
      }
    } else source = `${s}:`;
  }
  return { directive: directive.replace(/-(elem|attr)$/, ''), source, blocked: disposition !== 'report' };
}

/** The need of a `report-uri` body (`application/csp-report`). */
export function needOfReport(body: unknown): CspNeed | undefined {
  const r = isObj(body) && isObj(body['csp-report']) ? body['csp-report'] : undefined;
  if (!r) return undefined;
  return needOf(r['effective-directive'] ?? r['violated-directive'], r['blocked-uri'], r.disposition, r['script-sample']);
}

/**
 * Lint findings from the needs recorded for a server's components: one warning per template and directive, so a
 * builder sees "works here, breaks in a strict host" beside the other findings of the template.
 */
export function cspNeedFindings(needs: { uri: string; directive: string; source: string; blocked: number | boolean }[]): Finding[] {
  const groups = new Map<string, { uri: string; directive: string; sources: string[]; blocked: boolean }>();
  for (const n of needs) {
    const key = `${n.uri} ${n.directive}`;
    const g = groups.get(key) ?? { uri: n.uri, directive: n.directive, sources: [], blocked: false };
    g.sources.push(n.source);
    g.blocked ||= Boolean(n.blocked);
    groups.set(key, g);
  }
  return [...groups.values()].map((g) => ({
    severity: 'warning',
    rule: 'csp.strictProfile',
    path: `$.resources[${JSON.stringify(g.uri)}]._meta.ui.csp`,
    message:
      `the component needed ${g.directive} ${g.sources.join(' ')}, which the strict CSP (the MCP Apps default) refuses: ` +
      (g.blocked
        ? 'it was refused here too, so the component breaks in this host'
        : 'it works in hosts with a lenient policy (the reference host) and breaks in strict ones'),
  }));
}
