import { Type, type Static } from 'typebox';

/**
 * `POST /v1/embeddings` (CreateEmbeddingRequest and CreateEmbeddingResponse of the OpenAPI document).
 * The input's limits (2048 inputs, 8192 tokens each, no empty string) are checked in service.ts, so a
 * refusal names the input that broke them.
 */
const TokenId = Type.Integer({ minimum: 0 });

export const CreateEmbeddingBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Union([
      Type.String(),
      Type.Array(Type.String(), { maxItems: 100_000 }),
      Type.Array(TokenId, { maxItems: 1_000_000 }),
      Type.Array(Type.Array(TokenId, { maxItems: 1_000_000 }), { maxItems: 100_000 }),
    ]),
    encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    user: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);
export type CreateEmbeddingBody = Static<typeof CreateEmbeddingBody>;

/** CreateEmbeddingResponse: `embedding` is numbers, or base64 of little-endian float32 values. */
export const EmbeddingList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      object: Type.Literal('embedding'),
      index: Type.Integer(),
      embedding: Type.Union([Type.Array(Type.Number()), Type.String()]),
    }),
  ),
  model: Type.String(),
  usage: Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});
export type EmbeddingList = Static<typeof EmbeddingList>;
