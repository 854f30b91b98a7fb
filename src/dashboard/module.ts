import type { Module } from '../core/module.js';
import { Assets } from './assets.js';
import { dashboardAdminRoutes, dashboardRoutes, sessionPrincipal, signInLink } from './routes.js';
import { loadSignedOut, SIGNED_OUT } from './service.js';
import { Sessions } from './session.js';
import { dashboardMigrations } from './tables.js';

declare module '../core/module.js' {
  interface Services {
    /** The dashboard's sign-in (links and sessions) and its built files. */
    dashboard: { sessions: Sessions; assets: Assets };
  }
}

/** The dashboard: a web app over /admin/v1 at /dashboard, signed in by a one-time link or the admin key. */
export const dashboardModule: Module = {
  name: 'dashboard',
  migrations: dashboardMigrations,
  provide(ctx) {
    ctx.services.dashboard = { sessions: new Sessions(() => ctx.auth.adminKey()), assets: new Assets() };
  },
  init(ctx) {
    ctx.auth.addAdminSession(sessionPrincipal(ctx));
    // A session signed out on another instance is refused here within the change signal's poll.
    ctx.changes.on(SIGNED_OUT, () => loadSignedOut(ctx));
  },
  routes: dashboardRoutes,
  adminRoutes: dashboardAdminRoutes,
  async start(ctx) {
    await loadSignedOut(ctx);
    ctx.banner.push(`  dashboard: ${signInLink(ctx).url}   (signs this browser in; works once, for an hour)`);
  },
};
