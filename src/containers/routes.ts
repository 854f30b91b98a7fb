import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import { needs } from '../core/auth.js';
import { invalid } from '../core/errors.js';
import { validatorCompiler } from '../core/validation.js';
import type { App, Ctx } from '../core/module.js';
import { FORM_LIMITS, formError } from '../files/service.js';
import * as S from './schemas.js';
import * as svc from './service.js';

const tags = ['containers'];

/** The JSON form of a container file's creation, checked by hand: the same route also takes multipart. */
function fileIdOf(body: unknown): string {
  // No body at all (or an empty one, as every route reads it) misses the member, as on other routes.
  if (body === undefined)
    throw invalid(
      "Missing required parameter: 'file_id' (JSON), or a 'file' part (multipart/form-data).",
      'file_id',
      'missing_required_parameter',
    );
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw invalid("Send either multipart/form-data with a 'file' part, or JSON with 'file_id'.", null, 'invalid_content_type');
  for (const key of Object.keys(body))
    if (key !== 'file_id') throw invalid(`Unrecognized request argument supplied: ${key}`, key, 'unknown_parameter');
  const { file_id } = body as { file_id?: unknown };
  if (file_id === undefined) throw invalid("Missing required parameter: 'file_id'.", 'file_id', 'missing_required_parameter');
  if (typeof file_id !== 'string' || file_id.length > 256)
    throw invalid("Invalid type for 'file_id': expected a string of at most 256 characters.", 'file_id', 'invalid_type');
  return file_id;
}

/** `/v1/containers…`: containers, and their files (upload or copy, list, retrieve, content, delete). */
export async function containersRoutes(app: App, ctx: Ctx): Promise<void> {
  const project = (req: FastifyRequest) => ctx.auth.principalOf(req).projectId;

  app.post(
    '/v1/containers',
    { config: needs('containers', 'write'), schema: { tags, body: S.CreateContainerBody, response: { 200: S.ContainerObject } } },
    async (req) => svc.createContainer(ctx, project(req), req.body),
  );
  app.get(
    '/v1/containers',
    { config: needs('containers', 'read'), schema: { tags, querystring: S.ListContainersQuery, response: { 200: S.ContainerList } } },
    async (req) => svc.listContainers(ctx, project(req), req.query),
  );
  app.get(
    '/v1/containers/:container_id',
    { config: needs('containers', 'read'), schema: { tags, params: S.ContainerParams, response: { 200: S.ContainerObject } } },
    async (req) => svc.getContainer(ctx, project(req), req.params.container_id),
  );
  app.delete(
    '/v1/containers/:container_id',
    { config: needs('containers', 'write'), schema: { tags, params: S.ContainerParams, response: { 200: S.ContainerDeleted } } },
    async (req) => svc.deleteContainer(ctx, project(req), req.params.container_id),
  );

  // A container file by upload (multipart, parsed only in this scope) or by copy of a file (JSON).
  await app.register(async (scope) => {
    await scope.register(multipart, { throwFileSizeLimit: false, limits: { fileSize: ctx.settings.fileUploadLimit, ...FORM_LIMITS } });
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      '/v1/containers/:container_id/files',
      {
        config: needs('containers', 'write'),
        schema: {
          tags,
          summary: "Create a container file: multipart/form-data with 'file', or JSON with 'file_id'.",
          consumes: ['application/json', 'multipart/form-data'],
          params: S.ContainerParams,
          body: Type.Union([S.CreateContainerFileJson, S.CreateContainerFileForm]),
          response: { 200: S.ContainerFileObject },
        },
        // Either form: the multipart parts are read as they stream, the JSON body is checked by fileIdOf.
        validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : validatorCompiler(route)),
      },
      async (req) => {
        const { container_id } = req.params as { container_id: string };
        if (!req.isMultipart()) return svc.copyFileIn(ctx, project(req), container_id, fileIdOf(req.body));
        try {
          return await svc.uploadFileIn(ctx, project(req), container_id, req.parts());
        } catch (err) {
          throw formError(err);
        }
      },
    );
  });
  app.get(
    '/v1/containers/:container_id/files',
    {
      config: needs('containers', 'read'),
      schema: { tags, params: S.ContainerParams, querystring: S.ListContainerFilesQuery, response: { 200: S.ContainerFileList } },
    },
    async (req) => svc.listContainerFiles(ctx, project(req), req.params.container_id, req.query),
  );
  app.get(
    '/v1/containers/:container_id/files/:file_id',
    { config: needs('containers', 'read'), schema: { tags, params: S.ContainerFileParams, response: { 200: S.ContainerFileObject } } },
    async (req) => svc.getContainerFile(ctx, project(req), req.params.container_id, req.params.file_id),
  );
  app.delete(
    '/v1/containers/:container_id/files/:file_id',
    { config: needs('containers', 'write'), schema: { tags, params: S.ContainerFileParams, response: { 200: S.ContainerFileDeleted } } },
    async (req) => svc.deleteContainerFile(ctx, project(req), req.params.container_id, req.params.file_id),
  );
  app.get(
    '/v1/containers/:container_id/files/:file_id/content',
    {
      config: needs('containers', 'read'),
      schema: {
        tags,
        params: S.ContainerFileParams,
        produces: ['application/octet-stream'],
        response: { 200: Type.Unsafe<Readable>({ type: 'string', format: 'binary', description: 'The bytes of the container file.' }) },
      },
    },
    async (req, reply) => {
      const { file, stream } = await svc.openContainerFileContent(ctx, project(req), req.params.container_id, req.params.file_id);
      return reply.header('content-type', 'application/octet-stream').header('content-length', String(file.bytes)).send(stream);
    },
  );
}
