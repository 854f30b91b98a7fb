/** The effective CSP domains of a template: `ui.csp`, falling back field by field to the legacy `<vendor>/widgetCSP`. */
export interface EffectiveCsp {
  connectDomains: string[];
  resourceDomains: string[];
  frameDomains: string[];
  baseUriDomains: string[];
  /** Targets `openExternal` treats as approved redirect targets (only in the legacy key). */
  redirectDomains: string[];
}

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keeps only entries that are one CSP source (no spaces, quotes, commas or semicolons that would add directives). */
function sources(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list
    .filter((d): d is string => typeof d === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^\s;,'"]+$/i.test(d))
    .map((d) => d.replace(/\/$/, ''));
}

/** Reads the effective CSP from a template's `_meta`. */
export function effectiveCsp(meta: Record<string, any> | undefined, vendor: string): EffectiveCsp {
  const ui = isObj(meta?.ui) && isObj(meta.ui.csp) ? meta.ui.csp : undefined;
  const legacy = isObj(meta?.[`${vendor}/widgetCSP`]) ? meta![`${vendor}/widgetCSP`] : undefined;
  const pick = (camel: string, snake: string) => sources(ui?.[camel] !== undefined ? ui[camel] : legacy?.[snake]);
  return {
    connectDomains: pick('connectDomains', 'connect_domains'),
    resourceDomains: pick('resourceDomains', 'resource_domains'),
    frameDomains: pick('frameDomains', 'frame_domains'),
    baseUriDomains: sources(ui?.baseUriDomains),
    redirectDomains: sources(legacy?.redirect_domains),
  };
}

/**
 * The CSP profiles a host can apply. `strict`: the policy the MCP Apps spec writes (its restrictive default when
 * nothing is declared). `lenient`: the reference host's (ext-apps basic-host), which adds `'unsafe-eval'`, `blob:`
 * and `data:` scripts and `blob:` workers, so apps that work there work here.
 */
export const CSP_PROFILES = ['strict', 'lenient'] as const;
export type CspProfile = (typeof CSP_PROFILES)[number];

/** The profile named by a setting or a request, or an error naming the choices. */
export function cspProfile(value: string): CspProfile {
  if (!(CSP_PROFILES as readonly string[]).includes(value))
    throw new Error(`the CSP profile must be ${CSP_PROFILES.map((p) => `'${p}'`).join(' or ')}, got '${value}'`);
  return value as CspProfile;
}

/**
 * The Content-Security-Policy header of a component document, as the MCP Apps spec constructs it (profile
 * `strict`) or as its reference host does (`lenient`). `hostOrigins` are Standin's own origins the component must
 * reach (temporary file download URLs).
 */
export function buildCspHeader(csp: EffectiveCsp, hostOrigins: string[] = [], profile: CspProfile = 'strict'): string {
  const res = csp.resourceDomains.join(' ');
  const j = (...parts: string[]) => parts.filter(Boolean).join(' ');
  const lenient = profile === 'lenient';
  const extra = (...sources: string[]) => (lenient ? sources.join(' ') : '');
  return [
    "default-src 'none'",
    // 'report-sample' loosens nothing: violation reports carry the start of the refused code (probes are told apart).
    `script-src ${j("'self'", "'unsafe-inline'", extra("'unsafe-eval'", 'blob:', 'data:'), res, "'report-sample'")}`,
    `style-src ${j("'self'", "'unsafe-inline'", extra('blob:', 'data:'), res)}`,
    `connect-src ${j("'self'", csp.connectDomains.join(' '), hostOrigins.join(' '))}`,
    `img-src ${j("'self'", 'data:', 'blob:', res, hostOrigins.join(' '))}`,
    `font-src ${j("'self'", 'data:', extra('blob:'), res)}`,
    `media-src ${j("'self'", 'data:', 'blob:', res, hostOrigins.join(' '))}`,
    // Strict: workers fall back to script-src ('self' and the resource domains), as the spec's list has no worker-src.
    ...(lenient ? [`worker-src ${j("'self'", 'blob:', res)}`] : []),
    `frame-src ${csp.frameDomains.length ? csp.frameDomains.join(' ') : "'none'"}`,
    "object-src 'none'",
    `base-uri ${csp.baseUriDomains.length ? csp.baseUriDomains.join(' ') : "'self'"}`,
  ].join('; ');
}

/** True when `href`'s origin matches one of the domains (`https://*.example.com` matches subdomains). */
export function originAllowed(href: string, domains: string[]): boolean {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return false;
  }
  return domains.some((d) => {
    const m = /^([a-z][a-z0-9+.-]*):\/\/(\*\.)?([^/:]+)(:\d+)?$/i.exec(d);
    if (!m || `${m[1]}:`.toLowerCase() !== url.protocol) return false;
    const port = m[4] ? m[4].slice(1) : '';
    if (port !== url.port) return false;
    const host = url.hostname.toLowerCase();
    const want = m[3].toLowerCase();
    return m[2] ? host.endsWith(`.${want}`) : host === want;
  });
}
