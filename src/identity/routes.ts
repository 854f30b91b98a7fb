import { Deleted, ListOf } from '../core/schemas.js';
import { wholeList as list } from '../core/pagination.js';
import type { App, Ctx } from '../core/module.js';
import * as svc from './service.js';
import {
  ApiKeyObject,
  CreateApiKeyBody,
  CreateOrganizationBody,
  CreateProjectBody,
  CreateServiceAccountBody,
  OrganizationObject,
  OrgParams,
  ProjectKeyParams,
  ProjectObject,
  ProjectParams,
  ServiceAccountObject,
} from './schemas.js';

/** Control-plane routes for organizations, projects, API keys and service accounts (mounted under /admin/v1). */
export function identityAdminRoutes(app: App, ctx: Ctx) {
  const db = ctx.store.db;
  const tags = ['admin: identity'];

  app.get('/organizations', { schema: { tags, response: { 200: ListOf(OrganizationObject) } } }, async () =>
    list(await svc.listOrganizations(db)),
  );
  app.post(
    '/organizations',
    { schema: { tags, body: CreateOrganizationBody, response: { 201: OrganizationObject } } },
    async (req, reply) => reply.code(201).send(await svc.upsertOrganization(ctx, db, req.body)),
  );
  app.get('/organizations/:org_id', { schema: { tags, params: OrgParams, response: { 200: OrganizationObject } } }, async (req) =>
    svc.getOrganization(db, req.params.org_id),
  );
  app.get(
    '/organizations/:org_id/projects',
    { schema: { tags, params: OrgParams, response: { 200: ListOf(ProjectObject) } } },
    async (req) => {
      const org = await svc.getOrganization(db, req.params.org_id);
      return list(await svc.listProjects(db, org.id));
    },
  );
  app.post(
    '/organizations/:org_id/projects',
    { schema: { tags, params: OrgParams, body: CreateProjectBody, response: { 201: ProjectObject } } },
    async (req, reply) => {
      const org = await svc.getOrganization(db, req.params.org_id);
      return reply.code(201).send(await svc.upsertProject(ctx, db, org.id, req.body));
    },
  );
  app.get('/projects/:project_id', { schema: { tags, params: ProjectParams, response: { 200: ProjectObject } } }, async (req) =>
    svc.getProject(db, req.params.project_id),
  );
  app.get(
    '/projects/:project_id/api_keys',
    { schema: { tags, params: ProjectParams, response: { 200: ListOf(ApiKeyObject) } } },
    async (req) => {
      const project = await svc.getProject(db, req.params.project_id);
      return list(await svc.listApiKeys(db, project.id));
    },
  );
  app.post(
    '/projects/:project_id/api_keys',
    { schema: { tags, params: ProjectParams, body: CreateApiKeyBody, response: { 201: ApiKeyObject } } },
    async (req, reply) => {
      const { name, value, permissions, service_account_id } = req.body;
      const key = await svc.createApiKey(ctx, db, {
        projectId: req.params.project_id,
        name,
        value,
        permissions,
        serviceAccountId: service_account_id,
      });
      return reply.code(201).send(key);
    },
  );
  app.delete(
    '/projects/:project_id/api_keys/:key_id',
    { schema: { tags, params: ProjectKeyParams, response: { 200: Deleted('organization.project.api_key.deleted') } } },
    async (req) => {
      const { project_id, key_id } = req.params;
      await svc.deleteApiKey(ctx, project_id, key_id);
      return { id: key_id, object: 'organization.project.api_key.deleted' as const, deleted: true };
    },
  );
  app.get(
    '/projects/:project_id/service_accounts',
    { schema: { tags, params: ProjectParams, response: { 200: ListOf(ServiceAccountObject) } } },
    async (req) => {
      const project = await svc.getProject(db, req.params.project_id);
      return list(await svc.listServiceAccounts(db, project.id));
    },
  );
  app.post(
    '/projects/:project_id/service_accounts',
    { schema: { tags, params: ProjectParams, body: CreateServiceAccountBody, response: { 201: ServiceAccountObject } } },
    async (req, reply) => reply.code(201).send(await svc.upsertServiceAccount(ctx, db, req.params.project_id, req.body)),
  );
}
