import { Type, type Static } from 'typebox';
import { Deleted, ListOf, PageParams, PathId } from '../core/schemas.js';

/** `memory_limit` values of the reference document (CreateContainerBody). */
export const MEMORY_LIMITS = ['1g', '4g', '16g', '64g'] as const;
/** Minutes a container may stay idle before it expires (`expires_after.minutes`): the platform's default, and Standin's bounds. */
export const DEFAULT_EXPIRY_MINUTES = 20;
export const MAX_EXPIRY_MINUTES = 1440;
/** Files named at creation (`file_ids`). */
export const MAX_CREATE_FILES = 100;

const ExpiresAfter = Type.Object(
  {
    anchor: Type.Literal('last_active_at'),
    minutes: Type.Integer({ minimum: 1, maximum: MAX_EXPIRY_MINUTES }),
  },
  { additionalProperties: false },
);

/** `POST /v1/containers` (CreateContainerBody). `skills` and an allow-list `network_policy` are refused by the service, by name. */
export const CreateContainerBody = Type.Object(
  {
    name: Type.String({ maxLength: 256 }),
    file_ids: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: MAX_CREATE_FILES })),
    expires_after: Type.Optional(ExpiresAfter),
    memory_limit: Type.Optional(Type.Enum([...MEMORY_LIMITS])),
    skills: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 64 })),
    network_policy: Type.Optional(
      Type.Object(
        {
          type: Type.Enum(['disabled', 'allowlist']),
          allowed_domains: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: 100 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CreateContainerBody = Static<typeof CreateContainerBody>;

/** The container object (ContainerResource). */
export const ContainerObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('container'),
  name: Type.String(),
  created_at: Type.Integer(),
  status: Type.Enum(['running', 'expired']),
  last_active_at: Type.Integer(),
  expires_after: Type.Object({ anchor: Type.Literal('last_active_at'), minutes: Type.Integer() }),
  memory_limit: Type.Enum([...MEMORY_LIMITS]),
});
export type ContainerObject = Static<typeof ContainerObject>;

export const ContainerList = ListOf(ContainerObject);
export const ContainerDeleted = Deleted('container.deleted');

/** The container file object (ContainerFileResource). */
export const ContainerFileObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('container.file'),
  created_at: Type.Integer(),
  bytes: Type.Integer(),
  container_id: Type.String(),
  path: Type.String(),
  source: Type.Enum(['user', 'assistant']),
});
export type ContainerFileObject = Static<typeof ContainerFileObject>;

export const ContainerFileList = ListOf(ContainerFileObject);
export const ContainerFileDeleted = Deleted('container.file.deleted');

export const ContainerParams = Type.Object({ container_id: PathId });
export const ContainerFileParams = Type.Object({ container_id: PathId, file_id: PathId });

export const ListContainersQuery = Type.Object(
  { ...PageParams, name: Type.Optional(Type.String({ maxLength: 256 })) },
  { additionalProperties: false },
);
export const ListContainerFilesQuery = Type.Object({ ...PageParams }, { additionalProperties: false });

/** `POST /v1/containers/{id}/files` as JSON (CreateContainerFileBody): a file of `/v1/files` to copy in. */
export const CreateContainerFileJson = Type.Object({ file_id: Type.String({ maxLength: 256 }) }, { additionalProperties: false });

/** The same as multipart/form-data, for the OpenAPI document (the route reads the parts itself). */
export const CreateContainerFileForm = Type.Object({
  file: Type.String({ format: 'binary', description: 'The file; it becomes /mnt/data/<its name>.' }),
});
