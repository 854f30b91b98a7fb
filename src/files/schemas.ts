import { Type, type Static } from 'typebox';
import { ListOf } from '../core/schemas.js';

/** Purposes an upload may name (CreateFileRequest of the OpenAPI document). */
export const UPLOAD_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;
export type UploadPurpose = (typeof UPLOAD_PURPOSES)[number];

/** A file as `/v1/files` answers it (OpenAIFile). */
export const FileObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('file'),
  bytes: Type.Integer(),
  created_at: Type.Integer(),
  expires_at: Type.Union([Type.Integer(), Type.Null()]),
  filename: Type.String(),
  purpose: Type.String(),
  status: Type.Literal('processed'),
  status_details: Type.Null(),
});
export type FileObject = Static<typeof FileObject>;

export const FileList = ListOf(FileObject);
export const FileDeleted = Type.Object({ id: Type.String(), object: Type.Literal('file'), deleted: Type.Boolean() });

export const FileParams = Type.Object({ file_id: Type.String({ maxLength: 256 }) });

export const ListFilesQuery = Type.Object(
  {
    purpose: Type.Optional(Type.String({ maxLength: 64 })),
    limit: Type.Optional(Type.Integer()),
    order: Type.Optional(Type.Enum(['asc', 'desc'])),
    after: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: false },
);

/** The multipart form of `POST /v1/files`, for the OpenAPI document (the route reads the parts itself, streaming). */
export const UploadForm = Type.Object({
  file: Type.String({ format: 'binary', description: 'The file (streamed to storage, never held whole).' }),
  purpose: Type.Enum([...UPLOAD_PURPOSES]),
  'expires_after[anchor]': Type.Optional(Type.Literal('created_at')),
  'expires_after[seconds]': Type.Optional(Type.Integer({ minimum: 3600, maximum: 2_592_000 })),
});
