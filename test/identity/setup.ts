import { needs } from '../../src/core/auth.js';
import type { Module } from '../../src/core/module.js';
import { modules as defaultModules } from '../../src/server/modules.js';
import { upsertProject, upsertServiceAccount } from '../../src/identity/service.js';
import { startTestStandin, type TestStandin } from '../helpers.js';

/** The groups the probe routes stand for. */
const PROBED_GROUPS = ['files', 'models', 'threads'];

/**
 * Probe routes for authorization tests: `GET|POST /v1/_probe/<group>` need that group (read on GET,
 * write on POST), which the front door checks, and echo the principal.
 */
export const probeModule: Module = {
  name: 'test_probe',
  routes(app, ctx) {
    const handler = async (request: any) => ({ principal: ctx.auth.principalOf(request) });
    for (const group of PROBED_GROUPS) {
      app.get(`/v1/_probe/${group}`, { config: needs(group, 'read') }, handler);
      app.post(`/v1/_probe/${group}`, { config: needs(group, 'write') }, handler);
    }
  },
};

export interface IdentityFixture {
  t: TestStandin;
  orgId: string;
  projectId: string;
  /** A member service account of proj_demo. */
  sa: string;
  /** A reader service account of proj_demo. */
  reader: string;
  /** A second organization with its own project and service account. */
  other: { orgId: string; projectId: string; sa: string };
  admin(method: string, url: string, body?: unknown): Promise<{ status: number; body: any; headers: Record<string, any> }>;
}

/** A test Standin with the probe route, two service accounts in proj_demo and a second organization. */
export async function identityFixture(opts: Parameters<typeof startTestStandin>[0] = {}): Promise<IdentityFixture> {
  const t = await startTestStandin({ ...opts, modules: [...defaultModules, probeModule] });
  const db = t.ctx.store.db;
  const sa = await upsertServiceAccount(t.ctx, db, 'proj_demo', { id: 'svc_acct_ci', name: 'ci', role: 'member' });
  const reader = await upsertServiceAccount(t.ctx, db, 'proj_demo', { id: 'svc_acct_reader', name: 'reader', role: 'reader' });
  const adminRes = await t.req('POST', '/admin/v1/organizations', { key: 'admin', body: { id: 'org_other', name: 'Other org' } });
  if (adminRes.status !== 201 && adminRes.status !== 200) throw new Error(`creating org_other: ${JSON.stringify(adminRes.body)}`);
  const otherProject = await upsertProject(t.ctx, db, 'org_other', { id: 'proj_other', name: 'Other project' });
  const otherSa = await upsertServiceAccount(t.ctx, db, otherProject.id, { id: 'svc_acct_other', name: 'other', role: 'member' });
  return {
    t,
    orgId: 'org_demo',
    projectId: 'proj_demo',
    sa: sa.id,
    reader: reader.id,
    other: { orgId: 'org_other', projectId: otherProject.id, sa: otherSa.id },
    admin: (method, url, body) => t.req(method, url, { key: 'admin', body }),
  };
}

export const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
export const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
export const X509_TYPE = 'urn:vendor:params:oauth:token-type:x509';
