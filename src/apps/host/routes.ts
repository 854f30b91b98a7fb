import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ApiError, invalid } from '../../core/errors.js';
import { asset } from './assets.js';
import { MAX_FILE_BYTES } from './files.js';
import { hostPage } from './page.js';
import type { HostService } from './service.js';

const Meta = Type.Record(Type.String(), Type.Unknown());

/**
 * Whether a request's Host header names this Standin. The API can reach any URL and call tools, so a page on
 * another site that rebinds its DNS name to 127.0.0.1 must not reach it.
 */
export function hostAllowed(hostHeader: string | undefined, allowed: string[]): boolean {
  if (!hostHeader) return false;
  const name = hostHeader.replace(/:\d+$/, '').replace(/^\[|\]$/g, '').toLowerCase();
  return name === 'localhost' || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name) || allowed.includes(name);
}

/** The host page, its assets and its API under `/apps`. `allowedHosts`: host names besides loopback. */
export async function hostRoutes(app: FastifyInstance, service: HostService, vendor: string, allowedHosts: () => string[] = () => []) {
  app.get('/apps', { schema: { hide: true } }, async (_req, reply) => {
    reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store');
    // The host page embeds nothing from servers; components live on the widget origin.
    reply.header('content-security-policy', "default-src 'self'; frame-src *; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'");
    return hostPage(vendor);
  });

  app.get('/apps/assets/:file', { schema: { hide: true, params: Type.Object({ file: Type.String({ pattern: '^[a-z0-9-]+\\.(js|css|map)$' }) }) } }, async (req, reply) => {
    const { file } = req.params as { file: string };
    let body: Buffer;
    try {
      body = asset(`apps/${file}`);
    } catch (err) {
      throw new ApiError('not_found_error', (err as Error).message, { code: 'asset_missing' });
    }
    reply.header('content-type', file.endsWith('.css') ? 'text/css; charset=utf-8' : file.endsWith('.map') ? 'application/json' : 'text/javascript; charset=utf-8');
    reply.header('cache-control', 'no-cache');
    return body;
  });

  // Signed download URLs: fetched by components and by MCP servers under whatever name reaches Standin.
  app.get('/apps/files/:id', { schema: { hide: true, params: Type.Object({ id: Type.String() }), querystring: Type.Object({ expires: Type.Optional(Type.String()), sig: Type.Optional(Type.String()) }) } }, async (req, reply) => {
    const { id } = req.params as { id: string };
    const q = req.query as { expires?: string; sig?: string };
    const f = service.files.check(id, q.expires, q.sig);
    reply.header('access-control-allow-origin', '*');
    if (f === 'expired') throw new ApiError('permission_error', 'This download URL has expired; ask for a new one with getFileDownloadUrl.', { code: 'url_expired' });
    if (f === 'invalid') throw new ApiError('not_found_error', 'No file at this URL (the signature does not match).', { code: 'invalid_signature' });
    reply.header('content-type', f.mimeType).header('content-disposition', `inline; filename="${f.fileName.replace(/["\\\r\n]/g, '_')}"`).header('cache-control', 'private, max-age=60');
    reply.header('x-content-type-options', 'nosniff');
    return f.bytes;
  });

  await app.register(async (api) => apiRoutes(api, service, allowedHosts));
}

async function apiRoutes(app: FastifyInstance, service: HostService, allowedHosts: () => string[]) {
  app.addHook('onRequest', async (req) => {
    if (!hostAllowed(req.headers.host, allowedHosts())) throw new ApiError('permission_error', `The app host API answers only on this Standin's own host names, not '${req.headers.host}'.`, { code: 'host_not_allowed' });
  });

  app.post(
    '/apps/api/connect',
    { schema: { hide: true, body: Type.Object({ server: Type.String({ minLength: 1, maxLength: 4000 }), refresh: Type.Optional(Type.Boolean()), locale: Type.Optional(Type.String({ maxLength: 100 })) }, { additionalProperties: false }) } },
    async (req) => {
      const body = req.body as { server: string; refresh?: boolean; locale?: string };
      return service.describe(await service.connect(body.server, { refresh: body.refresh, locale: body.locale }));
    },
  );

  app.post(
    '/apps/api/call',
    {
      schema: {
        hide: true,
        body: Type.Object(
          { connection: Type.String(), name: Type.String({ minLength: 1 }), arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown())), _meta: Type.Optional(Meta), caller: Type.Union([Type.Literal('model'), Type.Literal('app')]) },
          { additionalProperties: false },
        ),
      },
    },
    async (req) => {
      const b = req.body as { connection: string; name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown>; caller: 'model' | 'app' };
      return { result: await service.callTool(b.connection, b.name, b.arguments ?? {}, b._meta ?? {}, b.caller) };
    },
  );

  app.post(
    '/apps/api/render',
    {
      schema: {
        hide: true,
        body: Type.Object(
          { connection: Type.String(), tool: Type.Optional(Type.String()), uri: Type.Optional(Type.String({ maxLength: 2000 })), globals: Type.Record(Type.String(), Type.Unknown()), widgetSessionId: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false },
        ),
      },
    },
    async (req) => service.render(req.body as any),
  );

  app.post('/apps/api/prefetch', { schema: { hide: true, body: Type.Object({ connection: Type.String(), tool: Type.String({ minLength: 1 }) }, { additionalProperties: false }) } }, async (req) => {
    const b = req.body as { connection: string; tool: string };
    return service.prefetch(b.connection, b.tool);
  });

  app.post('/apps/api/resource', { schema: { hide: true, body: Type.Object({ connection: Type.String(), uri: Type.String({ minLength: 1, maxLength: 2000 }) }, { additionalProperties: false }) } }, async (req) => {
    const b = req.body as { connection: string; uri: string };
    return service.readResource(b.connection, b.uri);
  });

  // Uploads: raw bytes, the name and type in headers, so no multipart parser is needed.
  await app.register(async (scope) => {
    scope.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: MAX_FILE_BYTES }, (_req, body, done) => done(null, body));
    scope.post('/apps/api/files', { schema: { hide: true } }, async (req) => {
      if (!Buffer.isBuffer(req.body)) throw invalid("send the file's bytes with content-type application/octet-stream", 'body');
      const name = decodeURIComponent(String(req.headers['x-file-name'] ?? 'file')).slice(0, 255);
      const mime = String(req.headers['x-file-type'] ?? 'application/octet-stream').slice(0, 200);
      const library = req.headers['x-file-library'] === 'true';
      const f = service.files.put(req.body, name, mime, library);
      return { fileId: f.fileId, fileName: f.fileName, mimeType: f.mimeType, size: f.size, library: f.library };
    });
  });

  app.get('/apps/api/files', { schema: { hide: true } }, async () => ({
    data: service.files.library().map((f) => ({ fileId: f.fileId, fileName: f.fileName, mimeType: f.mimeType, size: f.size })),
  }));

  app.post('/apps/api/files/:id/url', { schema: { hide: true, params: Type.Object({ id: Type.String() }) } }, async (req) => {
    const { id } = req.params as { id: string };
    const f = service.files.get(id);
    if (!f) throw new ApiError('not_found_error', `No file found with id '${id}'.`, { param: 'fileId' });
    return { downloadUrl: service.files.downloadUrl(service.opts.publicUrl(), id), fileId: id, fileName: f.fileName, mimeType: f.mimeType };
  });

}
