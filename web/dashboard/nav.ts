// The dashboard's pages in nav order: the dashboard's header and the app host's share this list.

/** A page of the dashboard: its path under /dashboard and its title. */
export interface NavPage {
  id: string;
  title: string;
}

export const NAV_PAGES: readonly NavPage[] = [
  { id: 'overview', title: 'Overview' },
  { id: 'requests', title: 'Requests' },
  { id: 'webhooks', title: 'Webhooks' },
  { id: 'runs', title: 'Runs' },
  { id: 'responses', title: 'Responses' },
  { id: 'files', title: 'Files & batches' },
  { id: 'containers', title: 'Containers' },
  { id: 'rate-limits', title: 'Rate limits' },
  { id: 'identity', title: 'Identity' },
];

/** Where the dashboard keeps the theme chosen with its header's button (`light`, `dark`, or absent: the system's). */
export const THEME_KEY = 'standin-theme';
