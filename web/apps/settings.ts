// What the host tells servers and components about the user: vendor, theme, locale, client metadata.
import { THEME_KEY } from '../dashboard/nav.js';
import { rid } from './json.js';

export const vendor = document.body.dataset.vendor || 'vendor';
/** A key in the vendor's namespace (`vendor/locale`). */
export const V = (k: string) => `${vendor}/${k}`;
export const PROTOCOL_VERSION = '2026-01-26';

export type Theme = 'light' | 'dark';
export interface UserLocation {
  city: string;
  region: string;
  country: string;
  timezone: string;
  latitude: number | null;
  longitude: number | null;
}

const savedTheme = localStorage.getItem(THEME_KEY);
export const settings = {
  // The theme chosen in the dashboard, else the system's: the two pages look alike.
  theme: (savedTheme === 'dark' || savedTheme === 'light'
    ? savedTheme
    : matchMedia('(prefers-color-scheme: dark)').matches
      ? 'dark'
      : 'light') as Theme,
  locale: navigator.language || 'en-US',
  userAgent: navigator.userAgent,
  userLocation: {
    city: '',
    region: '',
    country: '',
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    latitude: null,
    longitude: null,
  } as UserLocation,
  subject: localStorage.getItem('standin.subject') || rid('v1'),
  session: rid('conv'),
  organization: '',
};
localStorage.setItem('standin.subject', settings.subject);

/** The client metadata of the spec, sent on every tool call. */
export function clientMeta(): Record<string, unknown> {
  const loc = Object.fromEntries(Object.entries(settings.userLocation).filter(([, v]) => v !== '' && v !== null));
  const meta: Record<string, unknown> = {
    [V('locale')]: settings.locale,
    [V('userAgent')]: settings.userAgent,
    [V('userLocation')]: loc,
    [V('subject')]: settings.subject,
    [V('session')]: settings.session,
  };
  if (settings.organization) meta[V('organization')] = settings.organization;
  return meta;
}
