import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWeb, startHost, startMcpServer, type McpHttpServer } from '../../../test/apps/harness.js';
import { buildCspHeader, cspProfile, effectiveCsp } from './csp.js';
import { cspNeedFindings, needOf, needOfReport } from './csp-report.js';

describe('CSP profiles', () => {
  const declared = effectiveCsp({ ui: { csp: { resourceDomains: ['https://cdn.x.example'] } } }, 'vendor');

  it('strict is the MCP Apps policy: no eval, no blob: or data: scripts, workers under script-src', () => {
    const h = buildCspHeader(declared, [], 'strict');
    expect(h).toContain("script-src 'self' 'unsafe-inline' https://cdn.x.example 'report-sample';");
    expect(h).not.toMatch(/unsafe-eval|worker-src/);
    expect(buildCspHeader(declared)).toBe(h);
  });

  it("lenient is the reference host's: 'unsafe-eval', blob:/data: scripts and styles, blob: workers", () => {
    const h = buildCspHeader(declared, ['http://127.0.0.1:8080'], 'lenient');
    expect(h).toContain("script-src 'self' 'unsafe-inline' 'unsafe-eval' blob: data: https://cdn.x.example 'report-sample';");
    expect(h).toContain("style-src 'self' 'unsafe-inline' blob: data: https://cdn.x.example;");
    expect(h).toContain("worker-src 'self' blob: https://cdn.x.example;");
    // Declared domains still bound the rest: no loosening of connect-src, frames or base-uri.
    expect(h).toContain("connect-src 'self' http://127.0.0.1:8080;");
    expect(h).toContain("frame-src 'none'");
    expect(h).toContain("object-src 'none'");
  });

  it('a profile name is checked', () => {
    expect(cspProfile('lenient')).toBe('lenient');
    expect(() => cspProfile('loose')).toThrow("the CSP profile must be 'strict' or 'lenient', got 'loose'");
  });
});

describe('CSP violation reports', () => {
  it('turns a violation into the directive and the source that would allow it, never a path', () => {
    expect(needOf('script-src', 'eval', 'enforce')).toEqual({ directive: 'script-src', source: "'unsafe-eval'", blocked: true });
    expect(needOf('script-src-elem', 'data', 'report')).toEqual({ directive: 'script-src', source: 'data:', blocked: false });
    expect(needOf('worker-src', 'blob', 'report')).toEqual({ directive: 'worker-src', source: 'blob:', blocked: false });
    expect(needOf('connect-src', 'https://api.x.example/v1/secret?q=1', 'enforce')?.source).toBe('https://api.x.example');
    expect(needOf('connect-src; script-src', 'eval', 'enforce')).toBeUndefined();
    expect(needOf('script-src', '', 'enforce')).toBeUndefined();
    // An empty function compiled to probe for eval is no need; code is.
    expect(needOf('script-src', 'eval', 'enforce', '(function anonymous(\n) {\n\n})')).toBeUndefined();
    expect(needOf('script-src', 'eval', 'enforce', '(function anonymous(\n) {\nreturn 1\n})')?.source).toBe("'unsafe-eval'");
    expect(needOfReport({ 'csp-report': { 'effective-directive': 'worker-src', 'blocked-uri': 'blob', disposition: 'report' } })).toEqual({
      directive: 'worker-src',
      source: 'blob:',
      blocked: false,
    });
    expect(needOfReport({ nope: 1 })).toBeUndefined();
    expect(needOfReport('x')).toBeUndefined();
  });

  it('makes one warning per template and directive, saying whether it broke here', () => {
    const f = cspNeedFindings([
      { uri: 'ui://a', directive: 'script-src', source: "'unsafe-eval'", blocked: 0 },
      { uri: 'ui://a', directive: 'script-src', source: 'data:', blocked: 0 },
      { uri: 'ui://a', directive: 'worker-src', source: 'blob:', blocked: 1 },
    ]);
    expect(f).toHaveLength(2);
    expect(f[0]).toMatchObject({ severity: 'warning', rule: 'csp.strictProfile', path: '$.resources["ui://a"]._meta.ui.csp' });
    expect(f[0].message).toContain("script-src 'unsafe-eval' data:");
    expect(f[0].message).toContain('works in hosts with a lenient policy');
    expect(f[1].message).toContain('refused here too, so the component breaks in this host');
  });
});

/** A request to the widget listener under a host name (`*.localhost` names need no resolver this way). */
function widget(
  url: string,
  method = 'GET',
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: u.port,
        path: u.pathname,
        method,
        headers: { host: u.host, 'content-type': 'application/csp-report', ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the sandbox proxy page and the report endpoint of the widget listener', () => {
  let mcp: McpHttpServer;
  let host: Awaited<ReturnType<typeof startHost>>;
  let connection: string;

  beforeAll(async () => {
    await buildWeb();
    mcp = await startMcpServer('test/apps/fixtures/budget-server.mjs');
    host = await startHost();
    connection = (await host.req('POST', '/apps/api/connect', { body: { server: mcp.url } })).body.id;
  }, 60_000);
  afterAll(async () => {
    await host?.close();
    await mcp?.stop();
  });

  const render = async (cspProfile?: string) => {
    const r = await host.req('POST', '/apps/api/render', {
      body: { connection, tool: 'show-budget', globals: {}, widgetSessionId: 'ws_1', ...(cspProfile ? { cspProfile } : {}) },
    });
    return r;
  };

  it('serves the proxy with its own policy and the frame page with the component CSP (and the strict one report-only)', async () => {
    const r = await render('lenient');
    expect(r.status).toBe(200);
    expect(r.body.cspProfile).toBe('lenient');
    expect(r.body.sandboxUrl).toMatch(/^http:\/\/budget-example\.localhost:\d+\/_standin\/sandbox\/[a-f0-9]{24}$/);
    expect(r.body.html).toContain('id="__standin_init"');
    expect(r.body.cspHeader).toContain("'unsafe-eval'");
    expect(r.body.cspReportOnly).not.toContain("'unsafe-eval'");
    expect(r.body.cspReportOnly).toMatch(/report-uri http:\/\/budget-example\.localhost:\d+\/_standin\/csp-report\/[a-f0-9]{24}$/);

    const proxy = await widget(r.body.sandboxUrl);
    expect(proxy.status).toBe(200);
    expect(proxy.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-src 'self'; object-src 'none'; base-uri 'none'",
    );
    expect(proxy.body).toContain('sandbox-proxy-ready');
    expect(proxy.body).toContain('sandbox-resource-ready');

    const frame = await widget(`${r.body.sandboxUrl}/frame`);
    expect(frame.status).toBe(200);
    expect(frame.headers['content-security-policy']).toBe(r.body.cspHeader);
    expect(frame.headers['content-security-policy-report-only']).toBe(r.body.cspReportOnly);

    // Strict (the setting's default): no report-only policy.
    const strict = await render();
    expect(strict.body.cspProfile).toBe('strict');
    expect(strict.body.cspReportOnly).toBe('');
    expect((await widget(`${strict.body.sandboxUrl}/frame`)).headers['content-security-policy-report-only']).toBeUndefined();
    // Only on the document's own origin, and only known documents.
    expect((await widget(strict.body.sandboxUrl.replace('budget-example.localhost', '127.0.0.1'))).status).toBe(404);
    expect((await widget(strict.body.sandboxUrl.replace(/[a-f0-9]{24}$/, 'f'.repeat(24)))).status).toBe(404);
    expect((await render('loose')).status).toBe(400);
  });

  it('records reports against the template, which the connection then lints; bad reports are refused', async () => {
    const r = await render('lenient');
    const reportUrl = r.body.sandboxUrl.replace('/_standin/sandbox/', '/_standin/csp-report/');
    const report = (blocked: string, disposition = 'report') =>
      JSON.stringify({ 'csp-report': { 'effective-directive': 'worker-src', 'blocked-uri': blocked, disposition } });
    expect((await widget(reportUrl, 'POST', report('blob'))).status).toBe(204);
    expect((await widget(reportUrl, 'POST', report('blob'), { 'sec-fetch-dest': 'report' })).status).toBe(204);
    // A script's fetch (Sec-Fetch-Dest: empty), as a component forging a report would send it: refused.
    expect((await widget(reportUrl, 'POST', report('https://forged.example/x.js'), { 'sec-fetch-dest': 'empty' })).status).toBe(403);
    // Under another host name than the document's: not recorded.
    expect((await widget(reportUrl.replace('budget-example.localhost', '127.0.0.1'), 'POST', report('data'))).status).toBe(204);
    expect((await widget(reportUrl, 'POST', '{nope')).status).toBe(400);
    expect((await widget(reportUrl, 'POST', 'x'.repeat(20_000))).status).toBe(413);
    const again = await host.req('POST', '/apps/api/connect', { body: { server: mcp.url, refresh: true } });
    const findings = again.body.findings.filter((f: { rule: string }) => f.rule === 'csp.strictProfile');
    expect(findings).toHaveLength(1);
    expect(findings[0].path).toBe('$.resources["ui://budget/show.html"]._meta.ui.csp');
    expect(findings[0].message).toContain('worker-src blob:');
    expect(findings[0].message).not.toContain('data:');
    expect(findings[0].message).not.toContain('forged');
  });
});
