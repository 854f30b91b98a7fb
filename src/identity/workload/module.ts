import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Ctx } from '../../core/context.js';
import { createOutbound, type Outbound } from '../../core/outbound.js';
import { isLoopback } from '../../core/settings.js';
import type { Module } from '../../server/module.js';
import { WorkloadIdentity } from './exchange.js';
import { jwksFetcher } from './jwks.js';
import { MtlsListeners, type ListenerKind } from './listeners.js';
import { ipAllowlistPolicy, rolePolicy, workloadEndpointPolicy, workloadResolver } from './policy.js';
import { adminRoutes, tokenRoutes, v1Routes } from './routes.js';
import { LIMITS, ProviderBody, RootBody } from './schemas.js';
import { setAllowlist, upsertProvider, upsertRoot } from './service.js';
import { workloadMigrations } from './tables.js';

/** What this module publishes as `ctx.services.workloadIdentity`. */
export interface WorkloadIdentityService {
  identity: WorkloadIdentity;
  listeners: MtlsListeners;
  /** Starts an mTLS listener on `port` (0: a free one) and returns the port (tests, embedding). */
  startListener(kind: ListenerKind, port: number): Promise<number>;
}

const PURGE = 'workload_identity.purge';

interface State {
  identity: WorkloadIdentity;
  listeners: MtlsListeners;
  app: FastifyInstance | null;
  ownOutbound: Outbound | null;
}
const states = new WeakMap<Ctx, State>();
const stateOf = (ctx: Ctx): State => {
  const s = states.get(ctx);
  if (!s) throw new Error('the workload identity module is not initialised');
  return s;
};

/** Workload identity: providers, mappings, mTLS roots, token exchange (JWT and X.509), minted tokens and the permission policies. */
export const workloadModule: Module = {
  name: 'workload_identity',
  migrations: workloadMigrations,
  init(ctx) {
    const state: State = { identity: null as unknown as WorkloadIdentity, listeners: new MtlsListeners(ctx), app: null, ownOutbound: null };
    // The SSRF-guarded client another module publishes, or one of our own with the same rules.
    const outbound = () =>
      (ctx.services.outbound as Outbound | undefined) ??
      (state.ownOutbound ??= createOutbound({
        allowLoopback: isLoopback(ctx.settings.host),
        allow: (ctx.settings.outboundAllow ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      }));
    state.identity = new WorkloadIdentity(ctx, (url) => jwksFetcher(outbound())(url));
    states.set(ctx, state);
    const service: WorkloadIdentityService = {
      identity: state.identity,
      listeners: state.listeners,
      startListener: (kind, port) => {
        if (!state.app) throw new Error('routes are not registered yet');
        return state.listeners.start(state.app, kind, port);
      },
    };
    ctx.services.workloadIdentity = service;
    ctx.auth.addResolver(workloadResolver(state.identity, state.listeners));
    ctx.auth.addPolicy(workloadEndpointPolicy);
    ctx.auth.addPolicy(rolePolicy(ctx));
    ctx.auth.addPolicy(ipAllowlistPolicy(ctx));
  },
  async routes(app, ctx) {
    const state = stateOf(ctx);
    state.app = app;
    await tokenRoutes(app, ctx, state.identity, state.listeners);
    v1Routes(app, ctx);
    adminRoutes(app, ctx, state.identity, state.listeners);
  },
  jobs: (ctx) => [
    {
      kind: PURGE,
      maxAttempts: Number.MAX_SAFE_INTEGER,
      handler: async () => {
        await stateOf(ctx).identity.purge();
        return { retryAt: ctx.clock.now() + 3_600_000 };
      },
    },
  ],
  async start(ctx) {
    const state = stateOf(ctx);
    // One purge job per store: its fixed id makes a second instance's enqueue a no-op.
    await ctx.jobs.enqueue(ctx.store.db, PURGE, {}, { id: 'job_workload_identity_purge', runAt: ctx.clock.now() + 60_000 }).catch(() => undefined);
    if (ctx.settings.mtlsPort > 0) await state.listeners.start(state.app!, 'auth', ctx.settings.mtlsPort);
    if (ctx.settings.mtlsApiPort > 0) await state.listeners.start(state.app!, 'api', ctx.settings.mtlsApiPort);
  },
  async stop(ctx) {
    const state = states.get(ctx);
    if (!state) return;
    await state.listeners.stop();
    await state.ownOutbound?.close();
  },
  reset(ctx) {
    stateOf(ctx).identity.clearCaches();
  },
  config: [
    {
      at: 'organization',
      key: 'identity_providers',
      schema: Type.Array(ProviderBody, { maxItems: LIMITS.providersPerOrganization, description: 'Workload identity providers (jwt or x509) with their service account mappings.' }),
      async apply(ctx, tx, providers: any[], { organizationId }) {
        for (const p of providers) await upsertProvider(ctx, tx, organizationId!, p);
      },
    },
    {
      at: 'organization',
      key: 'mtls_roots',
      schema: Type.Array(RootBody, { maxItems: LIMITS.rootsPerOrganization, description: 'Mutual TLS root CAs (PEM) that X.509 providers trust, with their certificate-admission rules.' }),
      async apply(ctx, tx, roots: any[], { organizationId }) {
        for (const r of roots) await upsertRoot(ctx, tx, organizationId!, r);
      },
    },
    {
      at: 'project',
      key: 'ip_allowlist',
      schema: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: LIMITS.cidrsPerProject, description: 'Addresses or CIDRs every credential of the project must call from.' }),
      async apply(ctx, tx, cidrs: string[], { projectId }) {
        await setAllowlist(ctx, tx, projectId!, cidrs);
      },
    },
  ],
};
