import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClock } from '../../core/clock.js';
import { coreMigrations } from '../../core/tables.js';
import { startTestStandin, type TestStandin } from '../../../test/helpers.js';
import { startMcpServer, type McpHttpServer } from '../../../test/apps/harness.js';
import { appsModule, type AppsServices } from '../module.js';
import { buildCspHeader, effectiveCsp, originAllowed } from './csp.js';
import { DOWNLOAD_TTL_MS, FileStore } from './files.js';
import { injectBridge, visibilityOf } from './service.js';

describe('CSP', () => {
  it('uses the restrictive default when the template declares nothing', () => {
    const h = buildCspHeader(effectiveCsp({}, 'vendor'));
    expect(h).toContain("default-src 'none'");
    expect(h).toContain("connect-src 'self'");
    expect(h).toContain("frame-src 'none'");
    expect(h).toContain("object-src 'none'");
    expect(h).toContain("base-uri 'self'");
  });
  it('builds connect, resource, frame and base-uri sources from ui.csp, plus the host origins', () => {
    const csp = effectiveCsp(
      {
        ui: {
          csp: {
            connectDomains: ['https://api.x.example'],
            resourceDomains: ['https://cdn.x.example'],
            frameDomains: ['https://www.youtube.com'],
            baseUriDomains: ['https://base.x.example'],
          },
        },
      },
      'vendor',
    );
    const h = buildCspHeader(csp, ['http://127.0.0.1:8080']);
    expect(h).toContain("connect-src 'self' https://api.x.example http://127.0.0.1:8080");
    expect(h).toContain("script-src 'self' 'unsafe-inline' https://cdn.x.example");
    expect(h).toContain("img-src 'self' data: blob: https://cdn.x.example http://127.0.0.1:8080");
    expect(h).toContain('frame-src https://www.youtube.com');
    expect(h).toContain('base-uri https://base.x.example');
  });
  it('falls back field by field to the legacy widgetCSP, whose redirect_domains only it has', () => {
    const csp = effectiveCsp(
      {
        ui: { csp: { connectDomains: ['https://a.example'] } },
        'openai/widgetCSP': {
          connect_domains: ['https://b.example'],
          resource_domains: ['https://c.example'],
          redirect_domains: ['https://r.example'],
        },
      },
      'openai',
    );
    expect(csp).toEqual({
      connectDomains: ['https://a.example'],
      resourceDomains: ['https://c.example'],
      frameDomains: [],
      baseUriDomains: [],
      redirectDomains: ['https://r.example'],
    });
  });
  it('drops entries that would inject directives', () => {
    const csp = effectiveCsp(
      { ui: { csp: { connectDomains: ["https://a.example; script-src 'unsafe-eval'", 'https://ok.example', 42] } } },
      'vendor',
    );
    expect(csp.connectDomains).toEqual(['https://ok.example']);
  });
  it('matches origins with wildcard subdomains and ports', () => {
    expect(originAllowed('https://pay.shop.example/x', ['https://*.shop.example'])).toBe(true);
    expect(originAllowed('https://shop.example/x', ['https://*.shop.example'])).toBe(false);
    expect(originAllowed('http://shop.example/x', ['https://shop.example'])).toBe(false);
    expect(originAllowed('https://shop.example:8443/', ['https://shop.example:8443'])).toBe(true);
    expect(originAllowed('https://shop.example/', ['https://shop.example:8443'])).toBe(false);
  });
});

describe('visibility', () => {
  const tool = (meta: Record<string, unknown>) => ({ name: 't', _meta: meta });
  it('defaults to model and app', () => expect(visibilityOf(tool({}), 'vendor')).toEqual({ model: true, app: true }));
  it('ui.visibility wins over the compatibility keys', () => {
    expect(visibilityOf(tool({ ui: { visibility: ['app'] }, 'vendor/visibility': 'public' }), 'vendor')).toEqual({
      model: false,
      app: true,
    });
  });
  it('without ui.visibility, private hides from the model and widgetAccessible false from the component', () => {
    expect(visibilityOf(tool({ 'vendor/visibility': 'private' }), 'vendor')).toEqual({ model: false, app: true });
    expect(visibilityOf(tool({ 'vendor/widgetAccessible': false }), 'vendor')).toEqual({ model: true, app: false });
  });
});

describe('injectBridge', () => {
  it('puts the inert init JSON and the bridge script first in head, escaping </script>', () => {
    const out = injectBridge(
      '<!doctype html><html><head><title>x</title></head><body><script>app()</script></body></html>',
      { a: '</script><script>alert(1)</script>' },
      'bridge("</script>")',
    );
    expect(out.indexOf('__standin_init')).toBeLessThan(out.indexOf('<title>'));
    expect(out.indexOf('bridge(')).toBeLessThan(out.indexOf('app()'));
    expect(out).toContain('bridge("<\\/script>")');
    expect(out).not.toContain('</script><script>alert(1)');
    expect(out).toContain('\\u003c/script>');
  });
  it('handles documents without head or html', () => {
    expect(injectBridge('<html><body>x</body></html>', {}, '')).toMatch(/^<html><head><script type="application\/json"/);
    expect(injectBridge('<p>x</p>', {}, '')).toMatch(/^<!doctype html><head>/);
  });
});

describe('files', () => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ seed: false, modules: [{ name: 'core', migrations: coreMigrations }, appsModule] });
  });
  afterAll(async () => {
    await s.close();
  });

  it('signs download URLs that expire with the clock', async () => {
    const clock = createClock();
    const files = new FileStore(clock, () => s.ctx.store.db);
    const f = await files.put(Buffer.from('hi'), 'a.txt', 'text/plain', true);
    const url = new URL(await files.downloadUrl('http://h', f.fileId));
    const q = (k: string) => url.searchParams.get(k) ?? undefined;
    expect(await files.check(f.fileId, q('expires'), q('sig'))).toEqual(f);
    expect((await files.bytes(f.fileId))?.toString()).toBe('hi');
    const sig = q('sig')!;
    expect(await files.check(f.fileId, q('expires'), (sig[0] === 'x' ? 'y' : 'x') + sig.slice(1))).toBe('invalid');
    expect(await files.check(f.fileId, String(Number(q('expires')) + 60), q('sig'))).toBe('invalid');
    // Another instance on the same store (its own FileStore) accepts the URL: the signing key is shared.
    const other = new FileStore(clock, () => s.ctx.store.db);
    expect(await other.check(f.fileId, q('expires'), q('sig'))).toEqual(f);
    clock.advance(DOWNLOAD_TTL_MS + 2000);
    expect(await files.check(f.fileId, q('expires'), q('sig'))).toBe('expired');
    expect((await files.library()).map((x) => x.fileId)).toEqual([f.fileId]);
    expect((await files.put(Buffer.from('x'), 'b', 'text/plain', false)).library).toBe(false);
    expect(await files.library()).toHaveLength(1);
  });
});

describe('routes', () => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ seed: false, modules: [{ name: 'core', migrations: coreMigrations }, appsModule] });
  });
  afterAll(async () => s?.close());

  it('serves the host page', async () => {
    const r = await s.app.inject({ method: 'GET', url: '/apps' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-security-policy']).toContain("default-src 'self'");
    expect(r.body).toContain('/apps/assets/host.js');
    expect(r.body).toContain('data-vendor="vendor"');
  });

  it('answers the API only on its own host names (DNS rebinding)', async () => {
    const r = await s.app.inject({ method: 'GET', url: '/apps/api/files', headers: { host: 'evil.example:8080' } });
    expect(r.statusCode).toBe(403);
    expect(r.json().error.code).toBe('host_not_allowed');
    expect((await s.app.inject({ method: 'GET', url: '/apps/api/files', headers: { host: '127.0.0.1:8080' } })).statusCode).toBe(200);
    expect((await s.app.inject({ method: 'GET', url: '/apps/api/files', headers: { host: 'localhost' } })).statusCode).toBe(200);
    expect((await s.app.inject({ method: 'GET', url: '/apps/api/files', headers: { host: '[::1]:8080' } })).statusCode).toBe(200);
  });

  it('refuses to run a command that was not given on the command line', async () => {
    const r = await s.req('POST', '/apps/api/connect', { body: { server: 'rm -rf /' } });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('command_not_allowed');
    expect(r.body.error.param).toBe('server');
  });

  it('names the field on bad input and on unreachable servers', async () => {
    expect((await s.req('POST', '/apps/api/connect', { body: {} })).status).toBe(400);
    expect((await s.req('POST', '/apps/api/connect', { body: { server: 'http://x', extra: 1 } })).status).toBe(400);
    const r = await s.req('POST', '/apps/api/connect', { body: { server: 'http://127.0.0.1:9/mcp' } });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toContain("'server'");
    expect((await s.req('POST', '/apps/api/call', { body: { connection: 'conn_nope', name: 'x', caller: 'model' } })).status).toBe(404);
    expect((await s.req('POST', '/apps/api/call', { body: { connection: 'conn_nope', name: 'x', caller: 'god' } })).status).toBe(400);
  });

  it('connects to a stdio command once allowed, lists tools with visibility and findings', async () => {
    const cmd = 'node src/apps/lint/fixtures/bad-server.mjs';
    (s.ctx.services.apps as AppsServices).allowCommand(cmd);
    const r = await s.req('POST', '/apps/api/connect', { body: { server: cmd } });
    expect(r.status).toBe(200);
    expect(r.body.tools.map((t: any) => t.descriptor.name)).toEqual(['list_items', 'upload_photo']);
    expect(r.body.tools[1].templateUri).toBe('ui://bad/widget.html');
    expect(r.body.findings.map((f: any) => f.rule)).toContain('annotations.required');
    // Connecting again (the page refreshes) keeps the connection, so other tabs keep working.
    const again = await s.req('POST', '/apps/api/connect', { body: { server: cmd, refresh: true } });
    expect(again.body.id).toBe(r.body.id);
    expect(again.body.tools).toHaveLength(2);
    // Its template is not a component: rendering says why.
    const render = await s.req('POST', '/apps/api/render', {
      body: { connection: r.body.id, tool: 'upload_photo', globals: {}, widgetSessionId: 'ws_1' },
    });
    expect(render.status).toBe(400);
    expect(render.body.error.message).toContain('text/html;profile=mcp-app');
    const noUi = await s.req('POST', '/apps/api/render', {
      body: { connection: r.body.id, tool: 'list_items', globals: {}, widgetSessionId: 'ws_1' },
    });
    expect(noUi.status).toBe(400);
    expect(noUi.body.error.param).toBe('tool');
  });

  it('stores uploads and serves them through temporary URLs', async () => {
    const up = await s.app.inject({
      method: 'POST',
      url: '/apps/api/files',
      headers: {
        'content-type': 'application/octet-stream',
        'x-file-name': 'n%C3%B8.txt',
        'x-file-type': 'text/plain',
        'x-file-library': 'true',
      },
      payload: Buffer.from('bytes'),
    });
    expect(up.statusCode).toBe(200);
    const f = up.json();
    expect(f.fileName).toBe('nø.txt');
    const { downloadUrl } = (await s.req('POST', `/apps/api/files/${f.fileId}/url`, { body: {} })).body;
    const path = downloadUrl.replace(/^https?:\/\/[^/]+/, '');
    const dl = await s.app.inject({ method: 'GET', url: path });
    expect(dl.body).toBe('bytes');
    expect(dl.headers['access-control-allow-origin']).toBe('*');
    expect((await s.req('GET', '/apps/api/files')).body.data.map((x: any) => x.fileId)).toContain(f.fileId);
    s.ctx.clock.advance(DOWNLOAD_TTL_MS + 2000);
    expect((await s.app.inject({ method: 'GET', url: path })).statusCode).toBe(403);
    expect((await s.req('POST', '/apps/api/files/file_nope/url', { body: {} })).status).toBe(404);
  });

  it('refuses a badly encoded file name with a 400 naming the header', async () => {
    const up = await s.app.inject({
      method: 'POST',
      url: '/apps/api/files',
      headers: { 'content-type': 'application/octet-stream', 'x-file-name': '%E0%A4%A' },
      payload: Buffer.from('x'),
    });
    expect(up.statusCode).toBe(400);
    expect(up.json().error.param).toBe('x-file-name');
  });
});

describe('outbound connections and credentials (SSRF)', () => {
  const modules = [{ name: 'core', migrations: coreMigrations }, appsModule];
  // The client picks the Host header: a loopback name was all the API checked before.
  const LOOPBACK_HOST = { host: '127.0.0.1:8080' };
  let mcp: McpHttpServer;
  let internal: Server;
  let internalUrl = '';
  const internalHits: string[] = [];
  let exposed: TestStandin;
  let local: TestStandin;

  beforeAll(async () => {
    mcp = await startMcpServer('test/apps/fixtures/budget-server.mjs');
    // Something on loopback that is not for the outside: it must never be reached, nor its answer shown.
    internal = createServer((req, res) => {
      internalHits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/plain' }).end('internal-secret-token');
    });
    await new Promise<void>((r) => internal.listen(0, '127.0.0.1', () => r()));
    internalUrl = `http://127.0.0.1:${(internal.address() as AddressInfo).port}/mcp`;
    exposed = await startTestStandin({ seed: false, modules, settings: { host: '0.0.0.0' } });
    // The admin module sets the key in a full Standin; these carry only the core and the apps module.
    exposed.ctx.auth.setAdminKey(exposed.keys.admin);
    local = await startTestStandin({ seed: false, modules });
  });
  afterAll(async () => {
    await exposed?.close();
    await local?.close();
    await mcp?.stop();
    internal?.close();
  });

  it('off loopback, the API needs the admin key, and the page asks for it', async () => {
    const r = await exposed.req('POST', '/apps/api/connect', { body: { server: mcp.url }, headers: LOOPBACK_HOST });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('invalid_admin_key');
    expect((await exposed.req('GET', '/apps/api/files', { headers: LOOPBACK_HOST })).status).toBe(401);
    expect((await exposed.req('POST', '/apps/api/files/file_x/url', { body: {}, headers: LOOPBACK_HOST, key: 'not-the-key' })).status).toBe(
      401,
    );
    expect((await exposed.app.inject({ method: 'GET', url: '/apps', headers: LOOPBACK_HOST })).body).toContain('data-needs-key="true"');
    // On loopback nothing changes: no key, and the page does not ask.
    expect((await local.req('GET', '/apps/api/files', { headers: LOOPBACK_HOST })).status).toBe(200);
    expect((await local.app.inject({ method: 'GET', url: '/apps' })).body).not.toContain('data-needs-key');
  });

  it('with the key, the host reaches only what the outbound guard allows, and says no more than "could not connect"', async () => {
    const hitsBefore = internalHits.length;
    const connect = (server: string) =>
      exposed.req('POST', '/apps/api/connect', { key: 'admin', body: { server }, headers: LOOPBACK_HOST });
    const answers = await Promise.all([
      connect(mcp.url),
      connect(internalUrl),
      connect('http://127.0.0.1:9/mcp'),
      connect('http://169.254.169.254/mcp'),
      connect('http://localhost:9/mcp'),
    ]);
    for (const a of answers) {
      expect(a.status, JSON.stringify(a.body)).toBe(502);
      expect(a.body.error.code).toBe('server_unreachable');
      expect(a.body.error.param).toBe('server');
    }
    // The same words whatever happened (refused, closed, not MCP), and nothing of the upstream's answer.
    const texts = answers.map((a, i) =>
      a.body.error.message.replace(
        [mcp.url, internalUrl, 'http://127.0.0.1:9/mcp', 'http://169.254.169.254/mcp', 'http://localhost:9/mcp'][i],
        '<server>',
      ),
    );
    expect(new Set(texts).size).toBe(1);
    expect(texts[0]).toMatch(/^'server': could not connect to <server>\./);
    expect(texts[0]).not.toMatch(/ECONN|refusing|allow-list it|fetch failed|internal-secret|HTTP \d{3}|SSE error|Non-200/);
    expect(internalHits.length).toBe(hitsBefore);
  });

  it('on loopback, loopback servers work but the answer of something else is not echoed', async () => {
    expect((await local.req('POST', '/apps/api/connect', { body: { server: mcp.url } })).status).toBe(200);
    const r = await local.req('POST', '/apps/api/connect', { body: { server: internalUrl } });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toBe(
      `'server': could not connect to ${internalUrl}. Check that it is an MCP server (Streamable HTTP or SSE) and that Standin may reach it: private and loopback addresses only while Standin listens on loopback, or with --outbound-allow.`,
    );
    // Private and metadata addresses stay refused even on loopback (no connection is attempted).
    expect((await local.req('POST', '/apps/api/connect', { body: { server: 'http://169.254.169.254/latest/meta-data' } })).status).toBe(
      502,
    );
  });

  it('--outbound-allow lets an exposed Standin reach a server on a private or loopback address', async () => {
    const allowed = await startTestStandin({ seed: false, modules, settings: { host: '0.0.0.0', outboundAllow: '127.0.0.1' } });
    allowed.ctx.auth.setAdminKey(allowed.keys.admin);
    try {
      const r = await allowed.req('POST', '/apps/api/connect', { key: 'admin', body: { server: mcp.url }, headers: LOOPBACK_HOST });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.tools.map((t: { descriptor: { name: string } }) => t.descriptor.name)).toEqual([
        'show-budget',
        'commit-budget',
        'show-budget-classic',
      ]);
      const call = await allowed.req('POST', '/apps/api/call', {
        key: 'admin',
        body: { connection: r.body.id, name: 'show-budget', arguments: {}, caller: 'model' },
        headers: LOOPBACK_HOST,
      });
      expect(call.body.result.structuredContent.categories).toHaveLength(3);
    } finally {
      await allowed.close();
    }
  });

  it('stdio commands stay limited to the allow-list, with or without the key', async () => {
    const r = await exposed.req('POST', '/apps/api/connect', { key: 'admin', body: { server: 'node -e 1' }, headers: LOOPBACK_HOST });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('command_not_allowed');
  });
});
