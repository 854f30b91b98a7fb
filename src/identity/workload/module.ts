import { Type } from 'typebox';
import { forbidden } from '../../core/errors.js';
import { OFF } from '../../core/settings.js';
import { configSection, type App, type Module } from '../../core/module.js';
import { TOKEN_PREFIX, WorkloadIdentity } from './exchange.js';
import { jwksFetcher } from './jwks.js';
import { MtlsListeners, type ListenerKind } from './listeners.js';
import {
  closeEndpointsToWorkloadTokens,
  ipAllowlistPolicy,
  rolePolicy,
  workloadEndpointPolicy,
  workloadResolver,
  type AllowlistCache,
  type VerifiedConnections,
} from './policy.js';
import { adminRoutes, tokenRoutes } from './routes.js';
import { LIMITS, ProviderBody, RootBody } from './schemas.js';
import { setAllowlist, upsertProvider, upsertRoot, WORKLOAD_CONCERN } from './service.js';
import { purgeExchanges, purgeTokens } from './store.js';
import { workloadMigrations } from './tables.js';

declare module '../../core/module.js' {
  interface Services {
    workloadIdentity: WorkloadIdentityService;
  }
}

/** What this module publishes as `ctx.services.workloadIdentity`. */
export interface WorkloadIdentityService {
  identity: WorkloadIdentity;
  listeners: MtlsListeners;
  /** The main app, which the mTLS listeners serve too (set when routes are registered). */
  app: App | null;
  /** Starts an mTLS listener on `port` (0: a free one) and returns the port (tests, embedding). */
  startListener(kind: ListenerKind, port: number): Promise<number>;
  /** Project IP allowlists read lately (the allowlist policy's cache). */
  allowlists: AllowlistCache;
  /** mTLS API connections whose client certificate was verified lately (the token resolver's cache). */
  verifiedConnections: VerifiedConnections;
}

/** The hourly purge job of earlier versions; retention (below) does its work now. */
const RETIRED_PURGE = 'workload_identity.purge';
const HOUR_MS = 3_600_000;

/** Workload identity: providers, mappings, mTLS roots, token exchange (JWT and X.509), minted tokens and the permission policies. */
export const workloadModule: Module = {
  name: 'workload_identity',
  migrations: workloadMigrations,
  provide(ctx) {
    const identity = new WorkloadIdentity(ctx, (url) => jwksFetcher(ctx.outbound)(url));
    const listeners = new MtlsListeners(ctx);
    const service: WorkloadIdentityService = {
      identity,
      listeners,
      app: null,
      startListener: (kind, port) => {
        if (!service.app) throw new Error('routes are not registered yet');
        return listeners.start(service.app, kind, port);
      },
      allowlists: new Map(),
      verifiedConnections: new WeakMap(),
    };
    ctx.services.workloadIdentity = service;
    // Another instance changed providers, mappings, roots or an allowlist: read them again here.
    ctx.changes.on(WORKLOAD_CONCERN, () => {
      identity.invalidate();
      service.allowlists.clear();
    });
  },
  init(ctx) {
    const { identity, listeners, verifiedConnections } = ctx.services.workloadIdentity;
    ctx.auth.addResolver(workloadResolver(identity, listeners, verifiedConnections));
    ctx.auth.addPolicy(workloadEndpointPolicy);
    ctx.auth.addPolicy(rolePolicy(ctx));
    ctx.auth.addPolicy(ipAllowlistPolicy(ctx));
    // Workload identity tokens never reach the control plane (rule 6): say so rather than "wrong admin key".
    ctx.auth.refuseAdmin((credential) =>
      credential.startsWith(TOKEN_PREFIX)
        ? forbidden('Workload identity tokens are not accepted by the Admin API; use the admin key.', 'workload_token_not_allowed')
        : undefined,
    );
  },
  async routes(app, ctx) {
    const { identity, listeners } = ctx.services.workloadIdentity;
    ctx.services.workloadIdentity.app = app;
    // Before the areas that own the endpoints rule 6 closes register them.
    closeEndpointsToWorkloadTokens(app);
    await tokenRoutes(app, ctx, identity, listeners);
  },
  adminRoutes(app, ctx) {
    adminRoutes(app, ctx, ctx.services.workloadIdentity.listeners);
  },
  // Still registered so that a store of an earlier version sees its queued purge job finish (and go).
  jobs: () => [{ kind: RETIRED_PURGE, handler: async () => {} }],
  retention: [
    {
      name: 'workload_tokens',
      description: 'Minted workload identity tokens, by their expiry: a token still good is never deleted.',
      tables: ['workload_tokens'],
      defaultMs: HOUR_MS,
      purge: (tx, cutoffMs, limit) => purgeTokens(tx, Math.floor(cutoffMs / 1000), limit),
    },
    {
      name: 'workload_exchanges',
      description: 'The token exchange audit log (issued and refused exchanges), by when the exchange happened.',
      tables: ['workload_exchanges'],
      defaultMs: 30 * 24 * HOUR_MS,
      purge: (tx, cutoffMs, limit) => purgeExchanges(tx, Math.floor(cutoffMs / 1000), limit),
    },
  ],
  async start(ctx) {
    const { startListener } = ctx.services.workloadIdentity;
    if (ctx.settings.mtlsPort !== OFF) await startListener('auth', ctx.settings.mtlsPort);
    if (ctx.settings.mtlsApiPort !== OFF) await startListener('api', ctx.settings.mtlsApiPort);
  },
  async stop(ctx) {
    await ctx.services.workloadIdentity.listeners.stop();
  },
  reset(ctx) {
    ctx.services.workloadIdentity.identity.clearCaches();
    ctx.services.workloadIdentity.allowlists.clear();
  },
  config: [
    configSection({
      at: 'organization',
      key: 'identity_providers',
      schema: Type.Array(ProviderBody, {
        maxItems: LIMITS.providersPerOrganization,
        description: 'Workload identity providers (jwt or x509) with their service account mappings.',
      }),
      async apply(ctx, tx, providers, { organizationId }) {
        for (const p of providers) await upsertProvider(ctx, tx, organizationId!, p);
      },
    }),
    configSection({
      at: 'organization',
      key: 'mtls_roots',
      schema: Type.Array(RootBody, {
        maxItems: LIMITS.rootsPerOrganization,
        description: 'Mutual TLS root CAs (PEM) that X.509 providers trust, with their certificate-admission rules.',
      }),
      async apply(ctx, tx, roots, { organizationId }) {
        for (const r of roots) await upsertRoot(ctx, tx, organizationId!, r);
      },
    }),
    configSection({
      at: 'project',
      key: 'ip_allowlist',
      schema: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: LIMITS.cidrsPerProject,
        description: 'Addresses or CIDRs every credential of the project must call from.',
      }),
      async apply(ctx, tx, cidrs, { projectId }) {
        await setAllowlist(ctx, tx, projectId!, cidrs);
      },
    }),
  ],
};
