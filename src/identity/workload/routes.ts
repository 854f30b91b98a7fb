import { notFound } from '../../core/errors.js';
import { wholeList as list } from '../../core/pagination.js';
import type { App, Ctx } from '../../core/module.js';
import { toApiError } from '../../core/validation.js';
import { getOrganization, getProject } from '../service.js';
import { ExchangeError, sendOAuthError, UnsupportedTokenRequest } from './errors.js';
import { parseExchangeRequest, type WorkloadIdentity } from './exchange.js';
import type { MtlsListeners } from './listeners.js';
import * as schemas from './schemas.js';
import * as svc from './service.js';

/** POST /oauth/token, in its own plugin scope: the form body parser exists only here. */
export async function tokenRoutes(app: App, ctx: Ctx, wi: WorkloadIdentity, listeners: MtlsListeners) {
  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      const out: Record<string, string> = Object.create(null);
      for (const [k, v] of new URLSearchParams(body as string)) {
        // RFC 6749 §3.2: request parameters must not be included more than once.
        if (k in out)
          return done(new UnsupportedTokenRequest('duplicate_parameter', `'${k.slice(0, 100)}' is given more than once.`), undefined);
        out[k] = v;
      }
      done(null, out);
    });
    scope.setErrorHandler((error, request, reply) => {
      if (!(error instanceof ExchangeError) && toApiError(error).status >= 500) request.log.error({ err: error }, 'token endpoint failed');
      return sendOAuthError(reply, error);
    });
    scope.post(
      '/oauth/token',
      {
        bodyLimit: 64 * 1024,
        schema: {
          tags: ['oauth'],
          summary: 'Token exchange (RFC 8693): a JWT or, on the mutual TLS token endpoint, the client certificate, for an access token.',
          security: [],
          response: { 200: schemas.TokenResponseObject, '4xx': schemas.OAuthErrorObject, '5xx': schemas.OAuthErrorObject },
        },
      },
      async (request, reply) => {
        const endpoint = listeners.kindOf(request.raw.socket) === 'auth' ? 'mtls' : 'main';
        let parsed;
        try {
          parsed = parseExchangeRequest(request.body, ctx.settings.vendor, endpoint);
        } catch (err) {
          if (err instanceof ExchangeError) await wi.recordUnparsed(err, request.ip);
          throw err;
        }
        const tls = endpoint === 'mtls' ? { chain: listeners.chainOf(request.raw.socket) } : undefined;
        const response = await wi.exchange(parsed, { tls, clientIp: request.ip });
        reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
        return response;
      },
    );
  });
}

/** Control-plane routes of workload identity (mounted under /admin/v1). */
export function adminRoutes(app: App, ctx: Ctx, listeners: MtlsListeners) {
  const db = ctx.store.db;
  const tags = ['admin: workload identity'];
  const org = (orgId: string) => getOrganization(db, orgId);
  const provider = async (params: { org_id: string; provider_id: string }) =>
    svc.getProvider(db, (await org(params.org_id)).id, params.provider_id);

  app.get(
    '/organizations/:org_id/identity_providers',
    { schema: { tags, params: schemas.OrgParams, response: { 200: schemas.ProviderList } } },
    async (req) => list(await svc.listProviders(db, (await org(req.params.org_id)).id)),
  );
  app.post(
    '/organizations/:org_id/identity_providers',
    { schema: { tags, params: schemas.OrgParams, body: schemas.ProviderBody, response: { 201: schemas.ProviderObject } } },
    async (req, reply) => {
      const o = await org(req.params.org_id);
      const created = await svc.changeConfig(ctx, (tx) => svc.upsertProvider(ctx, tx, o.id, req.body));
      return reply.code(201).send(created);
    },
  );
  app.get(
    '/organizations/:org_id/identity_providers/:provider_id',
    { schema: { tags, params: schemas.OrgProviderParams, response: { 200: schemas.ProviderObject } } },
    async (req) => svc.withMappings(db, await provider(req.params)),
  );
  app.post(
    '/organizations/:org_id/identity_providers/:provider_id',
    { schema: { tags, params: schemas.OrgProviderParams, body: schemas.ProviderUpdateBody, response: { 200: schemas.ProviderObject } } },
    async (req) => {
      const p = await provider(req.params);
      const updated = await svc.changeConfig(ctx, (tx) => svc.updateProvider(ctx, tx, p.organization_id, p.id, req.body));
      return svc.withMappings(db, updated);
    },
  );
  app.delete(
    '/organizations/:org_id/identity_providers/:provider_id',
    { schema: { tags, params: schemas.OrgProviderParams, response: { 200: schemas.ProviderDeleted } } },
    async (req) => {
      const p = await provider(req.params);
      await svc.changeConfig(ctx, (tx) => svc.deleteProvider(ctx, tx, p.organization_id, p.id));
      return { id: p.id, object: 'organization.identity_provider.deleted' as const, deleted: true };
    },
  );

  app.get(
    '/organizations/:org_id/identity_providers/:provider_id/mappings',
    { schema: { tags, params: schemas.OrgProviderParams, response: { 200: schemas.MappingList } } },
    async (req) => list(await svc.listMappings(db, (await provider(req.params)).id)),
  );
  app.post(
    '/organizations/:org_id/identity_providers/:provider_id/mappings',
    { schema: { tags, params: schemas.OrgProviderParams, body: schemas.MappingBody, response: { 201: schemas.MappingObject } } },
    async (req, reply) => {
      const p = await provider(req.params);
      const m = await svc.changeConfig(ctx, (tx) => svc.upsertMapping(ctx, tx, p, req.body));
      return reply.code(201).send(m);
    },
  );
  app.get(
    '/organizations/:org_id/identity_providers/:provider_id/mappings/:mapping_id',
    { schema: { tags, params: schemas.OrgProviderMappingParams, response: { 200: schemas.MappingObject } } },
    async (req) => svc.getMapping(db, await provider(req.params), req.params.mapping_id),
  );
  app.post(
    '/organizations/:org_id/identity_providers/:provider_id/mappings/:mapping_id',
    {
      schema: { tags, params: schemas.OrgProviderMappingParams, body: schemas.MappingUpdateBody, response: { 200: schemas.MappingObject } },
    },
    async (req) => {
      const p = await provider(req.params);
      return svc.changeConfig(ctx, (tx) => svc.updateMapping(ctx, tx, p, req.params.mapping_id, req.body));
    },
  );
  app.delete(
    '/organizations/:org_id/identity_providers/:provider_id/mappings/:mapping_id',
    { schema: { tags, params: schemas.OrgProviderMappingParams, response: { 200: schemas.MappingDeleted } } },
    async (req) => {
      const p = await provider(req.params);
      const id = req.params.mapping_id;
      await svc.changeConfig(ctx, (tx) => svc.deleteMapping(ctx, tx, p, id));
      return { id, object: 'organization.identity_provider.mapping.deleted' as const, deleted: true };
    },
  );

  app.get(
    '/organizations/:org_id/mtls_roots',
    { schema: { tags, params: schemas.OrgParams, response: { 200: schemas.RootList } } },
    async (req) => list(await svc.listRoots(db, (await org(req.params.org_id)).id)),
  );
  app.post(
    '/organizations/:org_id/mtls_roots',
    { schema: { tags, params: schemas.OrgParams, body: schemas.RootBody, response: { 201: schemas.RootObject } } },
    async (req, reply) => {
      const o = await org(req.params.org_id);
      const r = await svc.changeConfig(ctx, (tx) => svc.upsertRoot(ctx, tx, o.id, req.body));
      return reply.code(201).send(r);
    },
  );
  app.get(
    '/organizations/:org_id/mtls_roots/:root_id',
    { schema: { tags, params: schemas.OrgRootParams, response: { 200: schemas.RootObject } } },
    async (req) => svc.getRoot(db, (await org(req.params.org_id)).id, req.params.root_id),
  );
  app.post(
    '/organizations/:org_id/mtls_roots/:root_id',
    { schema: { tags, params: schemas.OrgRootParams, body: schemas.RootUpdateBody, response: { 200: schemas.RootObject } } },
    async (req) => {
      const o = await org(req.params.org_id);
      return svc.changeConfig(ctx, (tx) => svc.updateRoot(ctx, tx, o.id, req.params.root_id, req.body));
    },
  );
  app.post(
    '/organizations/:org_id/mtls_roots/:root_id/retire',
    { schema: { tags, params: schemas.OrgRootParams, response: { 200: schemas.RootObject } } },
    async (req) => {
      const o = await org(req.params.org_id);
      return svc.changeConfig(ctx, (tx) => svc.updateRoot(ctx, tx, o.id, req.params.root_id, { status: 'retired' }));
    },
  );
  app.delete(
    '/organizations/:org_id/mtls_roots/:root_id',
    { schema: { tags, params: schemas.OrgRootParams, response: { 200: schemas.RootDeleted } } },
    async (req) => {
      const o = await org(req.params.org_id);
      const id = req.params.root_id;
      await svc.changeConfig(ctx, (tx) => svc.deleteRoot(ctx, tx, o.id, id));
      return { id, object: 'organization.mtls_root.deleted' as const, deleted: true };
    },
  );

  app.get(
    '/organizations/:org_id/workload_identity/exchanges',
    { schema: { tags, params: schemas.OrgParams, querystring: schemas.ExchangesQuery, response: { 200: schemas.ExchangeList } } },
    async (req) => {
      const { provider_id, outcome, ...page } = req.query;
      return svc.listExchanges(db, { organizationId: (await org(req.params.org_id)).id, providerId: provider_id, outcome }, page);
    },
  );
  // Refusals before a provider was resolved belong to no organization; this list has them too.
  app.get(
    '/workload_identity/exchanges',
    { schema: { tags, querystring: schemas.ExchangesQuery, response: { 200: schemas.ExchangeList } } },
    async (req) => {
      const { provider_id, outcome, ...page } = req.query;
      return svc.listExchanges(db, { organizationId: null, providerId: provider_id, outcome }, page);
    },
  );

  app.get(
    '/projects/:project_id/ip_allowlist',
    { schema: { tags, params: schemas.ProjectParams, response: { 200: schemas.AllowlistObject } } },
    async (req) => {
      const project = await getProject(db, req.params.project_id);
      return { object: 'project.ip_allowlist' as const, project_id: project.id, cidrs: await svc.getAllowlist(db, project.id) };
    },
  );
  app.put(
    '/projects/:project_id/ip_allowlist',
    { schema: { tags, params: schemas.ProjectParams, body: schemas.IpAllowlistBody, response: { 200: schemas.AllowlistObject } } },
    async (req) => svc.changeConfig(ctx, (tx) => svc.setAllowlist(ctx, tx, req.params.project_id, req.body.cidrs)),
  );

  app.get('/mtls/server_certificate', { schema: { tags, response: { 200: schemas.ServerCertificateObject } } }, async () => {
    const pem = listeners.serverCertificate();
    if (!pem) throw notFound('mTLS listener', 'server_certificate');
    return { object: 'mtls.server_certificate' as const, certificate: pem };
  });
}
