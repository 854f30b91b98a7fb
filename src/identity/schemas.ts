import { Type } from 'typebox';

export const PermissionsSchema = Type.Record(
  Type.String({ pattern: '^[a-z_]+$' }),
  Type.Union([Type.Literal('none'), Type.Literal('read'), Type.Literal('write')]),
  {
    description:
      'Per resource group of /v1 (models, threads, files, … as docs/core.md lists them): none, read or write; an unknown group is refused. Omitted: full access.',
  },
);

export const ApiKeyConfig = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    value: Type.Optional(
      Type.String({
        minLength: 20,
        maxLength: 200,
        description:
          'A fixed key (or a { file } / { env } reference); omitted, a random key is made and written to generated-secrets/ in the data folder (the log says where).',
      }),
    ),
    permissions: Type.Optional(PermissionsSchema),
  },
  { additionalProperties: false },
);

export const ServiceAccountConfig = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^svc_acct_[A-Za-z0-9_-]+$' })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    role: Type.Optional(Type.Union([Type.Literal('owner'), Type.Literal('member'), Type.Literal('reader')])),
    api_keys: Type.Optional(Type.Array(ApiKeyConfig, { maxItems: 100 })),
  },
  { additionalProperties: false },
);

export const CreateOrganizationBody = Type.Object(
  { id: Type.Optional(Type.String({ pattern: '^org_[A-Za-z0-9_-]+$' })), name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
export const CreateProjectBody = Type.Object(
  { id: Type.Optional(Type.String({ pattern: '^proj_[A-Za-z0-9_-]+$' })), name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    value: Type.Optional(Type.String({ minLength: 20, maxLength: 200 })),
    permissions: Type.Optional(PermissionsSchema),
    service_account_id: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export const CreateServiceAccountBody = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^svc_acct_[A-Za-z0-9_-]+$' })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    role: Type.Optional(Type.Union([Type.Literal('owner'), Type.Literal('member'), Type.Literal('reader')])),
  },
  { additionalProperties: false },
);

/** Path parameters of the control-plane routes. */
export const OrgParams = Type.Object({ org_id: Type.String({ maxLength: 200 }) });
export const ProjectParams = Type.Object({ project_id: Type.String({ maxLength: 200 }) });
export const ProjectKeyParams = Type.Object({ project_id: Type.String({ maxLength: 200 }), key_id: Type.String({ maxLength: 200 }) });

export const OrganizationObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('organization'),
  name: Type.String(),
  created_at: Type.Integer(),
});
export const ProjectObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('organization.project'),
  organization_id: Type.String(),
  name: Type.String(),
  created_at: Type.Integer(),
});
export const ServiceAccountObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('organization.project.service_account'),
  project_id: Type.String(),
  name: Type.String(),
  role: Type.String(),
  created_at: Type.Integer(),
});
export const ApiKeyObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('organization.project.api_key'),
  project_id: Type.String(),
  service_account_id: Type.Union([Type.String(), Type.Null()]),
  name: Type.String(),
  redacted_value: Type.String(),
  permissions: Type.Union([PermissionsSchema, Type.Null()]),
  created_at: Type.Integer(),
  value: Type.Optional(Type.String({ description: 'The key itself: only in the reply that created it.' })),
});
