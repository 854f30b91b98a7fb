import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { App, Ctx } from '../core/module.js';
import { PageParams, PathId, ProjectParams } from '../core/schemas.js';
import { ContainerFileList, ContainerList } from './schemas.js';
import * as svc from './service.js';

const ContainerParams = Type.Object({ project_id: PathId, container_id: PathId });
const FileParams = Type.Object({ project_id: PathId, container_id: PathId, file_id: PathId });
const ListQuery = Type.Object({ ...PageParams }, { additionalProperties: false });

/** `filename*=` of RFC 6266/5987: any name a sandbox wrote, safe in a header. */
const attachment = (name: string) =>
  `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;

/** A project's containers and their files for the dashboard (under /admin/v1), each file's bytes as a download. */
export function containersAdminRoutes(app: App, ctx: Ctx) {
  const tags = ['admin: containers'];
  app.get(
    '/projects/:project_id/containers',
    { schema: { tags, params: ProjectParams, querystring: ListQuery, response: { 200: ContainerList } } },
    async (req) => svc.listContainers(ctx, req.params.project_id, req.query),
  );
  app.get(
    '/projects/:project_id/containers/:container_id/files',
    { schema: { tags, params: ContainerParams, querystring: ListQuery, response: { 200: ContainerFileList } } },
    async (req) => svc.listContainerFiles(ctx, req.params.project_id, req.params.container_id, req.query),
  );
  app.get(
    '/projects/:project_id/containers/:container_id/files/:file_id/content',
    {
      schema: {
        tags,
        params: FileParams,
        produces: ['application/octet-stream'],
        response: {
          200: Type.Unsafe<Readable>({ type: 'string', format: 'binary', description: 'The bytes of the file, as a download.' }),
        },
      },
    },
    async (req, reply) => {
      const p = req.params;
      const { file, stream } = await svc.openContainerFileContent(ctx, p.project_id, p.container_id, p.file_id);
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', String(file.bytes))
        .header('content-disposition', attachment(file.path.split('/').pop() ?? file.id))
        .header('x-content-type-options', 'nosniff')
        .send(stream);
    },
  );
}
