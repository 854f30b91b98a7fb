import type { Server } from 'node:http';
import { isLoopback, isUnspecified } from '../core/settings.js';
import type { Ctx, Module } from '../core/module.js';
import { cspProfile } from './host/csp.js';
import { mcpFetch } from './host/fetch.js';
import { hostRoutes } from './host/routes.js';
import { HostService } from './host/service.js';
import { startWidgetServer } from './host/widget-server.js';
import { appHostMigrations } from './host/tables.js';

declare module '../core/module.js' {
  interface Services {
    apps: AppsServices;
  }
}

/** What the apps module publishes in `ctx.services.apps` (state lives here, so one process can run several Standins). */
export interface AppsServices {
  host: HostService;
  /** Lets the host page run a local stdio command (the CLI's `apps open` registers its command). */
  allowCommand(command: string): void;
  /** The widget listener once started. */
  widget?: { server: Server; origin: string };
  /** The main listener's address once it listens. */
  mainUrl?: string;
}

const appsOf = (ctx: Ctx) => ctx.services.apps;

function publicUrl(ctx: Ctx): string {
  if (ctx.settings.publicUrl) return ctx.settings.publicUrl.replace(/\/$/, '');
  const s = appsOf(ctx);
  if (s.mainUrl) return s.mainUrl;
  const host = isUnspecified(ctx.settings.host) ? '127.0.0.1' : ctx.settings.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${ctx.settings.port}`;
}

/**
 * The app host: `/apps` on the main listener (page, API, file downloads) and the component documents on a second
 * listener (`--widget-port`), a separate origin.
 */
export const appsModule: Module = {
  name: 'apps',
  migrations: appHostMigrations,
  provide(ctx) {
    const host = new HostService({
      vendor: () => ctx.settings.vendor,
      cspProfile: () => cspProfile(ctx.settings.appsCsp),
      clock: ctx.clock,
      publicUrl: () => publicUrl(ctx),
      widgetOrigin: () => {
        const w = appsOf(ctx).widget;
        if (!w) throw new Error('the widget listener is not started yet');
        return w.origin;
      },
      // Per-app origins (`<domain>.localhost`) only where users reach this listener itself: behind a balancer
      // (--widget-public-url) every component is served from the balancer's widget address.
      loopback: isLoopback(ctx.settings.host) && !ctx.settings.widgetPublicUrl,
      log: (obj, msg) => ctx.log.info(obj, msg),
      // MCP servers are reached like webhooks and JWKS: through the SSRF guard.
      fetch: mcpFetch(ctx.outbound),
      db: () => ctx.store.db,
    });
    ctx.services.apps = { host, allowCommand: (c) => host.allowCommand(c) };
  },
  async routes(app, ctx) {
    // The main listener's real address (port 0 picks one) is known once it listens.
    app.addHook('onListen', async () => {
      const addr = app.server.address();
      if (addr && typeof addr === 'object') {
        const h = isUnspecified(addr.address) ? '127.0.0.1' : addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
        appsOf(ctx).mainUrl = `http://${h === '[::1]' ? 'localhost' : h}:${addr.port}`;
      }
    });
    await hostRoutes(app, ctx);
  },
  async start(ctx) {
    const s = appsOf(ctx);
    try {
      cspProfile(ctx.settings.appsCsp);
    } catch (err) {
      throw new Error(`--apps-csp: ${(err as Error).message}`);
    }
    s.widget = await startWidgetServer(s.host, ctx.settings.host, ctx.settings.widgetPort);
    if (isUnspecified(ctx.settings.host)) {
      // Browsers cannot open 0.0.0.0: reach the widget listener on the public host name instead.
      const pub = new URL(publicUrl(ctx));
      s.widget.origin = `${pub.protocol}//${pub.hostname}:${new URL(s.widget.origin).port}`;
    }
    // Behind a load balancer every instance names the balancer's widget address (documents are in the store).
    if (ctx.settings.widgetPublicUrl) s.widget.origin = new URL(ctx.settings.widgetPublicUrl).origin;
    ctx.listeners.widgets = s.widget.origin;
    ctx.log.info({ widgetOrigin: s.widget.origin }, 'app host: components are served from a separate origin');
  },
  commands: {
    apps: {
      usage: [
        "apps lint <server> [--json] [--dev]    lint an MCP server's tool descriptors (--help: every option)",
        'apps validate-submission <file>        check a submission import file',
        'apps open <server>                     run the app host connected to <server>',
      ],
      load: async () => (await import('./cli.js')).runAppsCli,
    },
  },
  reset(ctx) {
    // The signing key of download URLs was emptied with the rest of the store.
    appsOf(ctx).host.files.forgetKey();
  },
  async stop(ctx) {
    const s = appsOf(ctx);
    await s.host.close();
    const w = s.widget;
    s.widget = undefined;
    if (w) {
      w.server.closeAllConnections();
      await new Promise<void>((resolve) => w.server.close(() => resolve()));
    }
  },
};
