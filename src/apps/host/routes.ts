import type { FastifyRequest } from 'fastify';
import { ApiError, invalid } from '../../core/errors.js';
import { nulRefusal } from '../../core/nul.js';
import type { App, Ctx } from '../../core/module.js';
import { isLoopback, isUnspecified } from '../../core/settings.js';
import { asset } from './assets.js';
import { MAX_FILE_BYTES } from './files.js';
import { hostPage } from './page.js';
import {
  AssetParams,
  CallBody,
  CallReply,
  ConnectBody,
  ConnectionReply,
  Document,
  DownloadQuery,
  DownloadUrlReply,
  FileIdParams,
  LibraryReply,
  PrefetchBody,
  PrefetchReply,
  RenderBody,
  RenderReply,
  ResourceBody,
  ResourceReply,
  UploadReply,
} from './schemas.js';
import type { HostService } from './service.js';

/**
 * Whether a request's Host header names this Standin. The API can reach any URL and call tools, so a page on
 * another site that rebinds its DNS name to 127.0.0.1 must not reach it.
 */
export function hostAllowed(hostHeader: string | undefined, allowed: string[]): boolean {
  if (!hostHeader) return false;
  const name = hostHeader
    .replace(/:\d+$/, '')
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  return name === 'localhost' || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name) || allowed.includes(name);
}

/** The host names of this Standin besides loopback: `--host` (unless it is a wildcard) and the `--public-url` host. */
function ownHostNames(ctx: Ctx): string[] {
  const { host, publicUrl } = ctx.settings;
  return [host, publicUrl ? new URL(publicUrl).hostname : ''].filter((h) => h && !isUnspecified(h)).map((h) => h.toLowerCase());
}

/** The host page, its assets and its API under `/apps`. */
export async function hostRoutes(app: App, ctx: Ctx) {
  const service = ctx.services.apps.host;
  // Off loopback, anyone who reaches the listener could make Standin connect and call tools: the API then
  // needs the admin key, which the page asks for.
  const needsKey = !isLoopback(ctx.settings.host);

  app.get('/apps', { schema: { hide: true, response: { 200: Document } } }, async (_req, reply) => {
    reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store');
    // The host page embeds nothing from servers; components live on the widget origin.
    reply.header(
      'content-security-policy',
      "default-src 'self'; frame-src *; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'",
    );
    return hostPage(ctx.settings.vendor, needsKey, service.opts.cspProfile());
  });

  app.get('/apps/assets/:file', { schema: { hide: true, params: AssetParams, response: { 200: Document } } }, async (req, reply) => {
    const { file } = req.params;
    let body: Buffer;
    try {
      body = asset(`apps/${file}`);
    } catch (err) {
      throw new ApiError('not_found_error', (err as Error).message, { code: 'asset_missing' });
    }
    reply.header(
      'content-type',
      file.endsWith('.css') ? 'text/css; charset=utf-8' : file.endsWith('.map') ? 'application/json' : 'text/javascript; charset=utf-8',
    );
    reply.header('cache-control', 'no-cache');
    return body;
  });

  // Signed download URLs: fetched by components and by MCP servers under whatever name reaches Standin.
  app.get(
    '/apps/files/:id',
    { schema: { hide: true, params: FileIdParams, querystring: DownloadQuery, response: { 200: Document } } },
    async (req, reply) => {
      const f = await service.files.check(req.params.id, req.query.expires, req.query.sig);
      reply.header('access-control-allow-origin', '*');
      if (f === 'expired')
        throw new ApiError('permission_error', 'This download URL has expired; ask for a new one with getFileDownloadUrl.', {
          code: 'url_expired',
        });
      if (f === 'invalid')
        throw new ApiError('not_found_error', 'No file at this URL (the signature does not match).', { code: 'invalid_signature' });
      reply
        .header('content-type', f.mimeType)
        .header('content-disposition', `inline; filename="${f.fileName.replace(/["\\\r\n]/g, '_')}"`)
        .header('cache-control', 'private, max-age=60');
      // The bytes are a component's (or a person's upload): opened as a page on Standin's own origin they would run
      // beside the dashboard and read its session binding. Sandboxed, they are an opaque origin with no scripts.
      reply.header('x-content-type-options', 'nosniff').header('content-security-policy', 'sandbox');
      const bytes = await service.files.bytes(f.fileId);
      if (!bytes) throw new ApiError('not_found_error', 'No file at this URL (it was removed).', { code: 'invalid_signature' });
      return bytes;
    },
  );

  await app.register(async (api) => {
    api.addHook('onRequest', async (req) => {
      if (!hostAllowed(req.headers.host, ownHostNames(ctx)))
        throw new ApiError(
          'permission_error',
          `The app host API answers only on this Standin's own host names, not '${req.headers.host}'.`,
          { code: 'host_not_allowed' },
        );
      if (needsKey) ctx.auth.admin(req);
    });
    await apiRoutes(api, service);
  });
}

async function apiRoutes(app: App, service: HostService) {
  app.post('/apps/api/connect', { schema: { hide: true, body: ConnectBody, response: { 200: ConnectionReply } } }, async (req) => {
    const { server, refresh, locale } = req.body;
    return await service.describe(await service.connect(server, { refresh, locale }));
  });

  app.post('/apps/api/call', { schema: { hide: true, body: CallBody, response: { 200: CallReply } } }, async (req) => {
    const b = req.body;
    return { result: await service.callTool(b.connection, b.name, b.arguments ?? {}, b._meta ?? {}, b.caller) };
  });

  app.post('/apps/api/render', { schema: { hide: true, body: RenderBody, response: { 200: RenderReply } } }, async (req) =>
    service.render(req.body),
  );

  app.post('/apps/api/prefetch', { schema: { hide: true, body: PrefetchBody, response: { 200: PrefetchReply } } }, async (req) =>
    service.prefetch(req.body.connection, req.body.tool),
  );

  app.post('/apps/api/resource', { schema: { hide: true, body: ResourceBody, response: { 200: ResourceReply } } }, async (req) =>
    service.readResource(req.body.connection, req.body.uri),
  );

  // Uploads: raw bytes, the name and type in headers, so no multipart parser is needed.
  await app.register(async (scope) => {
    scope.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: MAX_FILE_BYTES }, (_req, body, done) =>
      done(null, body),
    );
    scope.post('/apps/api/files', { schema: { hide: true, response: { 200: UploadReply } } }, async (req) => {
      if (!Buffer.isBuffer(req.body)) throw invalid("send the file's bytes with content-type application/octet-stream", 'body');
      const name = fileName(header(req, 'x-file-name'));
      const mime = (header(req, 'x-file-type') ?? 'application/octet-stream').slice(0, 200);
      const library = header(req, 'x-file-library') === 'true';
      const f = await service.files.put(req.body, name, mime, library);
      return { fileId: f.fileId, fileName: f.fileName, mimeType: f.mimeType, size: f.size, library: f.library };
    });
  });

  app.get('/apps/api/files', { schema: { hide: true, response: { 200: LibraryReply } } }, async () => ({
    data: (await service.files.library()).map((f) => ({ fileId: f.fileId, fileName: f.fileName, mimeType: f.mimeType, size: f.size })),
  }));

  app.post(
    '/apps/api/files/:id/url',
    { schema: { hide: true, params: FileIdParams, response: { 200: DownloadUrlReply } } },
    async (req) => {
      const { id } = req.params;
      const f = await service.files.get(id);
      if (!f) throw new ApiError('not_found_error', `No file found with id '${id}'.`, { param: 'fileId' });
      return {
        downloadUrl: await service.files.downloadUrl(service.opts.publicUrl(), id),
        fileId: id,
        fileName: f.fileName,
        mimeType: f.mimeType,
      };
    },
  );
}

/** The `x-file-name` header: percent-encoded UTF-8 (a bad encoding is refused, not a 500). */
function fileName(raw: string | undefined): string {
  if (raw === undefined) return 'file';
  let name: string;
  try {
    name = decodeURIComponent(raw).slice(0, 255);
  } catch {
    throw invalid("'x-file-name' must be the file name, percent-encoded (encodeURIComponent)", 'x-file-name');
  }
  // Decoding can make a NUL no header may carry; both stores must refuse it alike.
  const refused = nulRefusal(name, 'x-file-name');
  if (refused) throw refused;
  return name;
}

/** A request header as one string (the first, when sent twice). */
function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
