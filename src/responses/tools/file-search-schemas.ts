import { Type, type Static } from 'typebox';
import { RANKERS } from '../../vector-stores/service.js';

/** `tools[i]` of type `file_search` (FileSearchTool of the OpenAPI document); `filters` is checked by vector-stores/filters.ts. */
export const FileSearchEntrySchema = Type.Object(
  {
    type: Type.Literal('file_search'),
    vector_store_ids: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 16 }),
    filters: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
    max_num_results: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    ranking_options: Type.Optional(
      Type.Object(
        {
          ranker: Type.Optional(Type.Enum([...RANKERS])),
          score_threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
          hybrid_search: Type.Optional(
            Type.Object(
              { embedding_weight: Type.Number({ minimum: 0 }), text_weight: Type.Number({ minimum: 0 }) },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type FileSearchEntry = Static<typeof FileSearchEntrySchema> & Record<string, unknown>;
