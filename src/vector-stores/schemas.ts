import { Type, type Static, type TSchema } from 'typebox';
import { Deleted, ListOf, Metadata, PageParams } from '../core/schemas.js';

/** Request and reply shapes of `/v1/vector_stores…` (the OpenAPI document's, with its bounds). */
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Id = Type.String({ minLength: 1, maxLength: 256 });

/** `auto`, or `static` with 100–4096 tokens a chunk (the overlap's bound, half the size, is checked by the service). */
export const ChunkingStrategyParam = Type.Object(
  {
    type: Type.Enum(['auto', 'static']),
    static: Type.Optional(
      Type.Object(
        {
          max_chunk_size_tokens: Type.Integer({ minimum: 100, maximum: 4096 }),
          chunk_overlap_tokens: Type.Integer({ minimum: 0 }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ChunkingStrategyParam = Static<typeof ChunkingStrategyParam>;

const AttributeValue = Type.Union([Type.String({ maxLength: 512 }), Type.Number(), Type.Boolean()]);
/** Up to 16 attributes: keys of at most 64 characters; values strings (≤ 512), numbers or booleans. */
export const AttributesParam = Nullable(
  Type.Record(Type.String(), AttributeValue, { maxProperties: 16, propertyNames: { maxLength: 64 } }),
);
const MetadataParam = Nullable(
  Type.Record(Type.String(), Type.String({ maxLength: 512 }), { maxProperties: 16, propertyNames: { maxLength: 64 } }),
);
const ExpiresAfter = Type.Object(
  { anchor: Type.Literal('last_active_at'), days: Type.Integer({ minimum: 1, maximum: 365 }) },
  { additionalProperties: false },
);

export const CreateVectorStoreBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 512 })),
    description: Type.Optional(Type.String({ maxLength: 2048 })),
    file_ids: Type.Optional(Type.Array(Id, { maxItems: 500 })),
    chunking_strategy: Type.Optional(ChunkingStrategyParam),
    expires_after: Type.Optional(ExpiresAfter),
    metadata: Type.Optional(MetadataParam),
  },
  { additionalProperties: false },
);
export type CreateVectorStoreBody = Static<typeof CreateVectorStoreBody>;

export const ModifyVectorStoreBody = Type.Object(
  {
    name: Type.Optional(Nullable(Type.String({ maxLength: 512 }))),
    expires_after: Type.Optional(Nullable(ExpiresAfter)),
    metadata: Type.Optional(MetadataParam),
  },
  { additionalProperties: false },
);
export type ModifyVectorStoreBody = Static<typeof ModifyVectorStoreBody>;

export const CreateStoreFileBody = Type.Object(
  { file_id: Id, chunking_strategy: Type.Optional(ChunkingStrategyParam), attributes: Type.Optional(AttributesParam) },
  { additionalProperties: false },
);
export type CreateStoreFileBody = Static<typeof CreateStoreFileBody>;

export const UpdateAttributesBody = Type.Object({ attributes: AttributesParam }, { additionalProperties: false });

/** `file_ids` (with shared `chunking_strategy`/`attributes`) or `files` (each with its own), 1 to 2000. */
export const CreateBatchBody = Type.Object(
  {
    file_ids: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: 2000 })),
    files: Type.Optional(Type.Array(CreateStoreFileBody, { minItems: 1, maxItems: 2000 })),
    chunking_strategy: Type.Optional(ChunkingStrategyParam),
    attributes: Type.Optional(AttributesParam),
  },
  { additionalProperties: false },
);
export type CreateBatchBody = Static<typeof CreateBatchBody>;

export const RANKERS = ['none', 'auto', 'default-2024-11-15'] as const;
export const RankingOptions = Type.Object(
  { ranker: Type.Optional(Type.Enum([...RANKERS])), score_threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })) },
  { additionalProperties: false },
);

export const SearchBody = Type.Object(
  {
    query: Type.Union([
      Type.String({ maxLength: 4096 }),
      Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { minItems: 1, maxItems: 16 }),
    ]),
    max_num_results: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    ranking_options: Type.Optional(RankingOptions),
    filters: Type.Optional(
      Type.Unknown({ description: 'A comparison {type: eq|ne|gt|gte|lt|lte|in|nin, key, value} or a compound {type: and|or, filters}.' }),
    ),
    rewrite_query: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type SearchBody = Static<typeof SearchBody>;

export const ListQuery = Type.Object(PageParams, { additionalProperties: false });
export const ListFilesQuery = Type.Object(
  { ...PageParams, filter: Type.Optional(Type.Enum(['in_progress', 'completed', 'failed', 'cancelled'])) },
  { additionalProperties: false },
);

export const StoreParams = Type.Object({ vector_store_id: Id });
export const StoreFileParams = Type.Object({ vector_store_id: Id, file_id: Id });
export const BatchParams = Type.Object({ vector_store_id: Id, batch_id: Id });

// Replies

const FileCounts = Type.Object({
  in_progress: Type.Integer(),
  completed: Type.Integer(),
  failed: Type.Integer(),
  cancelled: Type.Integer(),
  total: Type.Integer(),
});
const Attributes = Nullable(Type.Record(Type.String(), AttributeValue));

export const VectorStoreObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('vector_store'),
  created_at: Type.Integer(),
  name: Type.String(),
  description: Nullable(Type.String()),
  usage_bytes: Type.Integer(),
  file_counts: FileCounts,
  status: Type.Enum(['expired', 'in_progress', 'completed']),
  expires_after: Type.Optional(ExpiresAfter),
  expires_at: Nullable(Type.Integer()),
  last_active_at: Nullable(Type.Integer()),
  metadata: Metadata,
});
export type VectorStoreObject = Static<typeof VectorStoreObject>;

const StaticChunking = Type.Object({
  type: Type.Literal('static'),
  static: Type.Object({ max_chunk_size_tokens: Type.Integer(), chunk_overlap_tokens: Type.Integer() }),
});

export const StoreFileObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('vector_store.file'),
  usage_bytes: Type.Integer(),
  created_at: Type.Integer(),
  vector_store_id: Type.String(),
  status: Type.Enum(['in_progress', 'completed', 'cancelled', 'failed']),
  last_error: Nullable(Type.Object({ code: Type.Enum(['server_error', 'unsupported_file', 'invalid_file']), message: Type.String() })),
  chunking_strategy: StaticChunking,
  attributes: Attributes,
});
export type StoreFileObject = Static<typeof StoreFileObject>;

export const BatchObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('vector_store.files_batch'),
  created_at: Type.Integer(),
  vector_store_id: Type.String(),
  status: Type.Enum(['in_progress', 'completed', 'cancelled', 'failed']),
  file_counts: FileCounts,
});
export type BatchObject = Static<typeof BatchObject>;

export const FileContentPage = Type.Object({
  object: Type.Literal('vector_store.file_content.page'),
  data: Type.Array(Type.Object({ type: Type.Literal('text'), text: Type.String() })),
  has_more: Type.Boolean(),
  next_page: Nullable(Type.String()),
});
export type FileContentPage = Static<typeof FileContentPage>;

export const SearchResultsPage = Type.Object({
  object: Type.Literal('vector_store.search_results.page'),
  search_query: Type.Array(Type.String()),
  data: Type.Array(
    Type.Object({
      file_id: Type.String(),
      filename: Type.String(),
      score: Type.Number({ minimum: 0, maximum: 1 }),
      attributes: Attributes,
      content: Type.Array(Type.Object({ type: Type.Literal('text'), text: Type.String() })),
    }),
  ),
  has_more: Type.Boolean(),
  next_page: Nullable(Type.String()),
});
export type SearchResultsPage = Static<typeof SearchResultsPage>;

export const VectorStoreList = ListOf(VectorStoreObject);
export const StoreFileList = ListOf(StoreFileObject);
export const VectorStoreDeleted = Deleted('vector_store.deleted');
export const StoreFileDeleted = Deleted('vector_store.file.deleted');
