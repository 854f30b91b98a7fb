import { keepGeneratedSecret } from '../core/generated-secrets.js';
import { Type } from 'typebox';
import { configSection, type Module } from '../core/module.js';
import { identityAdminRoutes } from './routes.js';
import { ApiKeyConfig, ServiceAccountConfig } from './schemas.js';
import { createApiKey, listApiKeys, resolveApiKey, upsertServiceAccount } from './service.js';
import { identityMigrations } from './tables.js';

/** Organizations, projects, platform API keys and service accounts; the bearer resolver for API keys. */
export const identityModule: Module = {
  name: 'identity',
  migrations: identityMigrations,
  init(ctx) {
    // Ads and admin keys are not platform keys: skip the lookup for them.
    ctx.auth.addResolver(async (token) =>
      token.startsWith('sk-') && !token.startsWith('sk-ads-') && !token.startsWith('sk-admin-') ? resolveApiKey(ctx.store.db, token) : null,
    );
  },
  adminRoutes: identityAdminRoutes,
  config: [
    configSection({
      at: 'project',
      key: 'api_keys',
      schema: Type.Array(ApiKeyConfig, { maxItems: 100 }),
      async apply(ctx, tx, keys, { projectId }) {
        const existing = new Set((await listApiKeys(tx, projectId!)).filter((k) => !k.service_account_id).map((k) => k.name));
        for (const k of keys) {
          if (!k.value && existing.has(k.name)) continue;
          const key = await createApiKey(ctx, tx, { projectId: projectId!, name: k.name, value: k.value, permissions: k.permissions });
          if (key.value && !k.value) {
            const file = keepGeneratedSecret(ctx.settings.data, `api-key-${projectId}-${key.name}`, key.value);
            ctx.log.warn(
              { project: projectId, key: key.name, secret_file: file },
              `new API key '${key.name}' for ${projectId}: read it from ${file} (this instance's data folder)`,
            );
          }
        }
      },
    }),
    configSection({
      at: 'project',
      key: 'service_accounts',
      schema: Type.Array(ServiceAccountConfig, { maxItems: 100 }),
      async apply(ctx, tx, accounts, { projectId }) {
        for (const a of accounts) {
          const sa = await upsertServiceAccount(ctx, tx, projectId!, { id: a.id, name: a.name, role: a.role });
          const existing = new Set((await listApiKeys(tx, projectId!)).filter((k) => k.service_account_id === sa.id).map((k) => k.name));
          for (const k of a.api_keys ?? []) {
            if (!k.value && existing.has(k.name)) continue;
            await createApiKey(ctx, tx, {
              projectId: projectId!,
              name: k.name,
              value: k.value,
              permissions: k.permissions,
              serviceAccountId: sa.id,
            });
          }
        }
      },
    }),
  ],
};
