import type { Module } from '../core/module.js';
import { Assets } from './assets.js';
import { dashboardAdminRoutes, dashboardRoutes, sessionPrincipal, signInLink } from './routes.js';
import { Sessions } from './session.js';

declare module '../core/module.js' {
  interface Services {
    /** The dashboard's sign-in (links and sessions) and its built files. */
    dashboard: { sessions: Sessions; assets: Assets };
  }
}

/** The dashboard: a web app over /admin/v1 at /dashboard, signed in by a one-time link or the admin key. */
export const dashboardModule: Module = {
  name: 'dashboard',
  provide(ctx) {
    ctx.services.dashboard = { sessions: new Sessions(() => ctx.auth.adminKey()), assets: new Assets() };
  },
  init(ctx) {
    ctx.auth.addAdminSession(sessionPrincipal(ctx));
  },
  routes: dashboardRoutes,
  adminRoutes: dashboardAdminRoutes,
  start(ctx) {
    ctx.banner.push(`  dashboard: ${signInLink(ctx).url}   (signs this browser in; works once, for an hour)`);
  },
};
