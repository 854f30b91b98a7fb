import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { App, Ctx } from '../core/module.js';
import { PageParams, PathId, ProjectParams } from '../core/schemas.js';
import { FileList } from './schemas.js';
import * as svc from './service.js';

const FileParams = Type.Object({ project_id: PathId, file_id: PathId });
const ListQuery = Type.Object({ ...PageParams, purpose: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false });

/** `filename*=` of RFC 6266/5987: any name a client uploaded, safe in a header. */
const attachment = (name: string) =>
  `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;

/** A project's files for the dashboard (under /admin/v1): the list, and each file's bytes as a download. */
export function filesAdminRoutes(app: App, ctx: Ctx) {
  const tags = ['admin: files'];
  app.get(
    '/projects/:project_id/files',
    { schema: { tags, params: ProjectParams, querystring: ListQuery, response: { 200: FileList } } },
    async (req) => svc.listFiles(ctx, req.params.project_id, req.query),
  );
  app.get(
    '/projects/:project_id/files/:file_id/content',
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
      const { file, stream } = await svc.openFileContent(ctx, req.params.project_id, req.params.file_id);
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', String(file.bytes))
        .header('content-disposition', attachment(file.filename))
        .header('x-content-type-options', 'nosniff')
        .send(stream);
    },
  );
}
