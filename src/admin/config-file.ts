import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { Type, type TSchema } from 'typebox';
import type * as Yaml from 'yaml';
import { lazy } from '../store/lazy.js';

const yaml = lazy<typeof Yaml>('yaml');
import type { Ctx } from '../core/module.js';
import { upsertOrganization, upsertProject } from '../identity/service.js';
import type { ConfigSection, Module } from '../core/module.js';
import { pointerToParam } from '../core/validation.js';
import { allowSecretRefs, resolveSecretRefs, secretRefsIn } from './config-secrets.js';

/**
 * The declarative config file: organizations → projects, and the sections each module adds at the root,
 * in every organization or in every project. Applying the same file twice changes nothing: everything is
 * matched by its declared id (or, without one, by its name) and updated in place. Secret fields may hold
 * a reference instead (`{ file }`, `{ env }`: src/admin/config-secrets.ts), resolved when the file is read.
 */
export function configSchema(modules: readonly Module[]): TSchema {
  return allowSecretRefs(resolvedSchema(modules));
}

/** The config once read: every secret a string. */
function resolvedSchema(modules: readonly Module[]): TSchema {
  const sections = (at: 'root' | 'organization' | 'project') =>
    Object.fromEntries(
      modules
        .flatMap((m) => m.config ?? [])
        .filter((s) => s.at === at)
        .map((s) => [s.key, Type.Optional(s.schema)]),
    );
  const Project = Type.Object(
    {
      id: Type.Optional(Type.String({ pattern: '^proj_[A-Za-z0-9_-]+$' })),
      name: Type.String({ minLength: 1, maxLength: 200 }),
      ...sections('project'),
    },
    { additionalProperties: false },
  );
  const Organization = Type.Object(
    {
      id: Type.Optional(Type.String({ pattern: '^org_[A-Za-z0-9_-]+$' })),
      name: Type.String({ minLength: 1, maxLength: 200 }),
      projects: Type.Optional(Type.Array(Project, { maxItems: 1000 })),
      ...sections('organization'),
    },
    { additionalProperties: false },
  );
  return Type.Object(
    {
      $schema: Type.Optional(Type.String()),
      organizations: Type.Optional(Type.Array(Organization, { maxItems: 1000 })),
      ...sections('root'),
    },
    {
      additionalProperties: false,
      $id: 'https://standin.dev/schemas/config.json',
      title: 'Standin configuration',
      description: 'Declares organizations, projects, keys, service accounts, ad accounts and the settings of every area.',
    },
  );
}

/** Reads a YAML or JSON config file, its secret references resolved (relative paths from the file's folder). */
export function readConfigFile(path: string): unknown {
  const text = readFileSync(path, 'utf8');
  try {
    return resolveSecretRefs(/\.json$/i.test(path) ? JSON.parse(text) : yaml().parse(text), dirname(path));
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`);
  }
}

/** Validates a config object; returns readable problems (empty when valid). */
export function checkConfig(modules: readonly Module[], config: unknown): string[] {
  // verbose: errors carry their schema, so a key a section renamed (`x-renamed`) is answered with its new name.
  const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
  addFormats.default(ajv);
  // References are resolved only in a file read at start: one left here came from elsewhere (the control plane).
  const refs = secretRefsIn(config).map(
    (at) =>
      `${at}: a reference ({ file } or { env }) is read only from the config file Standin starts with (--config); give the secret itself`,
  );
  if (refs.length) return refs;
  const validate = ajv.compile(resolvedSchema(modules) as object);
  if (validate(config)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => {
    const at = pointerToParam(e.instancePath) || '(root)';
    const key = e.keyword === 'additionalProperties' ? (e.params as { additionalProperty: string }).additionalProperty : undefined;
    const renamed = key && (e.parentSchema as { 'x-renamed'?: Record<string, string> } | undefined)?.['x-renamed']?.[key];
    if (renamed) return `${at}: '${key}' is now '${renamed}'`;
    return `${at}: ${e.message}${key ? `: unknown key '${key}'` : ''}`;
  });
}

/** A config document once it matched `configSchema`: sections are keyed by their `key`. */
type Sections = Record<string, unknown>;
interface ConfigDocument extends Sections {
  organizations?: (Sections & { id?: string; name: string; projects?: (Sections & { id?: string; name: string })[] })[];
}

/** What a config sent to the control plane holds that only the file on disk may (sections' `controlPlaneProblems`). */
function controlPlaneProblems(sections: readonly ConfigSection[], config: ConfigDocument): string[] {
  const of = (at: ConfigSection['at'], doc: Sections) =>
    sections.filter((s) => s.at === at && doc[s.key] !== undefined).flatMap((s) => s.controlPlaneProblems?.(doc[s.key]) ?? []);
  return [
    ...of('root', config),
    ...(config.organizations ?? []).flatMap((o) => [...of('organization', o), ...(o.projects ?? []).flatMap((p) => of('project', p))]),
  ];
}

/**
 * Applies a config object in one transaction. `from`: the config file Standin starts with (the operator's,
 * the default) or a config sent to the control plane, which may not name the server's files.
 */
export async function applyConfig(
  ctx: Ctx,
  modules: readonly Module[],
  input: unknown,
  opts: { from?: 'file' | 'control_plane' } = {},
): Promise<void> {
  const sections = modules.flatMap((m) => m.config ?? []);
  const problems = checkConfig(modules, input);
  if (!problems.length && opts.from === 'control_plane') problems.push(...controlPlaneProblems(sections, input as ConfigDocument));
  if (problems.length) throw new Error(`the config is not valid:\n  ${problems.join('\n  ')}`);
  const config = input as ConfigDocument;
  await ctx.store.db.transaction().execute(async (tx) => {
    for (const s of sections.filter((s) => s.at === 'root')) if (config[s.key] !== undefined) await s.apply(ctx, tx, config[s.key], {});
    for (const o of config.organizations ?? []) {
      const org = await upsertOrganization(ctx, tx, { id: o.id, name: o.name });
      for (const p of o.projects ?? []) {
        const project = await upsertProject(ctx, tx, org.id, { id: p.id, name: p.name });
        for (const s of sections.filter((s) => s.at === 'project')) {
          if (p[s.key] !== undefined) await s.apply(ctx, tx, p[s.key], { organizationId: org.id, projectId: project.id });
        }
      }
      // Organization sections after projects: they may refer to projects (e.g. identity mappings).
      for (const s of sections.filter((s) => s.at === 'organization')) {
        if (o[s.key] !== undefined) await s.apply(ctx, tx, o[s.key], { organizationId: org.id });
      }
    }
  });
  ctx.jobs.wake();
}
