import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import { invalid } from '../core/errors.js';
import { needs } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { FileDeleted, FileList, FileObject, FileParams, ListFilesQuery, UploadForm } from './schemas.js';
import { FORM_LIMITS, formError } from './multipart.js';
import * as svc from './service.js';

const tags = ['files'];

/** `/v1/files`: upload (multipart, streamed), list, retrieve, delete, content (streamed, byte-exact). */
export async function filesRoutes(app: App, ctx: Ctx): Promise<void> {
  // Multipart is parsed only here (its own scope): other routes keep refusing what is not JSON. Its
  // limits are its own; the JSON body limit (--body-limit) stays as it is.
  await app.register(async (scope) => {
    await scope.register(multipart, {
      throwFileSizeLimit: false,
      limits: { fileSize: ctx.settings.fileUploadLimit, ...FORM_LIMITS },
    });
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      '/v1/files',
      {
        config: needs('files', 'write'),
        schema: {
          tags,
          summary: 'Upload a file (multipart/form-data: file, purpose, expires_after).',
          consumes: ['multipart/form-data'],
          body: UploadForm,
          response: { 200: FileObject },
        },
        // The form is read part by part while the file streams to storage; uploadFile checks every field.
        validatorCompiler: () => () => true,
      },
      async (req) => {
        const { projectId } = ctx.auth.principalOf(req);
        if (!req.isMultipart())
          throw invalid("Send the upload as multipart/form-data with the fields 'file' and 'purpose'.", null, 'invalid_content_type');
        try {
          return await svc.uploadFile(ctx, projectId, req.parts());
        } catch (err) {
          throw formError(err);
        }
      },
    );
  });

  app.get(
    '/v1/files',
    { config: needs('files', 'read'), schema: { tags, querystring: ListFilesQuery, response: { 200: FileList } } },
    async (req) => svc.listFiles(ctx, ctx.auth.principalOf(req).projectId, req.query),
  );
  app.get(
    '/v1/files/:file_id',
    { config: needs('files', 'read'), schema: { tags, params: FileParams, response: { 200: FileObject } } },
    async (req) => svc.getFile(ctx, ctx.auth.principalOf(req).projectId, req.params.file_id),
  );
  app.delete(
    '/v1/files/:file_id',
    { config: needs('files', 'write'), schema: { tags, params: FileParams, response: { 200: FileDeleted } } },
    async (req) => svc.deleteFile(ctx, ctx.auth.principalOf(req).projectId, req.params.file_id),
  );
  app.get(
    '/v1/files/:file_id/content',
    {
      config: needs('files', 'read'),
      schema: {
        tags,
        params: FileParams,
        produces: ['application/octet-stream'],
        response: { 200: Type.Unsafe<Readable>({ type: 'string', format: 'binary', description: 'The bytes of the file, as uploaded.' }) },
      },
    },
    async (req, reply) => {
      const { file, stream } = await svc.openFileContent(ctx, ctx.auth.principalOf(req).projectId, req.params.file_id);
      return reply.header('content-type', 'application/octet-stream').header('content-length', String(file.bytes)).send(stream);
    },
  );
}
