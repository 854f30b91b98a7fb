import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Ctx } from '../core/module.js';
import * as svc from './service.js';
import { CreateApiKeyBody, CreateOrganizationBody, CreateProjectBody, CreateServiceAccountBody } from './schemas.js';

const list = <T>(data: T[]) => ({ object: 'list' as const, data, first_id: (data[0] as any)?.id ?? null, last_id: (data.at(-1) as any)?.id ?? null, has_more: false });

/** Control-plane routes for organizations, projects, API keys and service accounts. */
export function identityAdminRoutes(app: FastifyInstance, ctx: Ctx) {
  const db = ctx.store.db;
  const OrgParams = Type.Object({ org_id: Type.String() });
  const ProjectParams = Type.Object({ project_id: Type.String() });
  const tags = ['admin: identity'];

  app.get('/organizations', { schema: { tags } }, async () => list(await svc.listOrganizations(db)));
  app.post('/organizations', { schema: { tags, body: CreateOrganizationBody } }, async (req, reply) => {
    reply.code(201);
    return svc.upsertOrganization(ctx, db, req.body as any);
  });
  app.get('/organizations/:org_id', { schema: { tags, params: OrgParams } }, async (req) => svc.getOrganization(db, (req.params as any).org_id));
  app.get('/organizations/:org_id/projects', { schema: { tags, params: OrgParams } }, async (req) => {
    const org = await svc.getOrganization(db, (req.params as any).org_id);
    return list(await svc.listProjects(db, org.id));
  });
  app.post('/organizations/:org_id/projects', { schema: { tags, params: OrgParams, body: CreateProjectBody } }, async (req, reply) => {
    const org = await svc.getOrganization(db, (req.params as any).org_id);
    reply.code(201);
    return svc.upsertProject(ctx, db, org.id, req.body as any);
  });
  app.get('/projects/:project_id', { schema: { tags, params: ProjectParams } }, async (req) => svc.getProject(db, (req.params as any).project_id));
  app.get('/projects/:project_id/api_keys', { schema: { tags, params: ProjectParams } }, async (req) => {
    const project = await svc.getProject(db, (req.params as any).project_id);
    return list(await svc.listApiKeys(db, project.id));
  });
  app.post('/projects/:project_id/api_keys', { schema: { tags, params: ProjectParams, body: CreateApiKeyBody } }, async (req, reply) => {
    const body = req.body as any;
    reply.code(201);
    return svc.createApiKey(ctx, db, {
      projectId: (req.params as any).project_id,
      name: body.name,
      value: body.value,
      permissions: body.permissions,
      serviceAccountId: body.service_account_id,
    });
  });
  app.delete('/projects/:project_id/api_keys/:key_id', { schema: { tags, params: Type.Object({ project_id: Type.String(), key_id: Type.String() }) } }, async (req) => {
    const { project_id, key_id } = req.params as any;
    await svc.deleteApiKey(db, project_id, key_id);
    ctx.auth.forget();
    return { id: key_id, object: 'organization.project.api_key.deleted', deleted: true };
  });
  app.get('/projects/:project_id/service_accounts', { schema: { tags, params: ProjectParams } }, async (req) => {
    const project = await svc.getProject(db, (req.params as any).project_id);
    return list(await svc.listServiceAccounts(db, project.id));
  });
  app.post('/projects/:project_id/service_accounts', { schema: { tags, params: ProjectParams, body: CreateServiceAccountBody } }, async (req, reply) => {
    reply.code(201);
    return svc.upsertServiceAccount(ctx, db, (req.params as any).project_id, req.body as any);
  });
}
