import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSettings } from '../core/settings.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStandin } from '../server/app.js';
import { coreMigrations } from '../core/tables.js';
import { startTestStandin } from '../../test/helpers.js';
import { appsModule } from './module.js';
import { runAppsCli, startAppsHost } from './cli.js';

const settings = (vendor = 'vendor') => ({ ...readSettings([], {}).settings, vendor });
async function run(args: string[], vendor = 'vendor') {
  let out = '';
  let err = '';
  const code = await runAppsCli(
    args,
    { settings: settings(vendor), boot: createStandin },
    { out: (t) => (out += t + '\n'), err: (t) => (err += t + '\n') },
  );
  return { code, out, err };
}
const TOUR = 'node examples/bridge-tour/server.mjs';
const BAD = 'node src/apps/lint/fixtures/bad-server.mjs';

let httpUrl = '';
let stopTour: () => void = () => undefined;
beforeAll(async () => {
  const proc = spawn(process.execPath, ['examples/bridge-tour/server.mjs', '--http', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  stopTour = () => proc.kill();
  httpUrl = await new Promise<string>((resolve) =>
    proc.stdout!.on('data', (d) => /(http:\S+\/mcp)/.test(String(d)) && resolve(/(http:\S+\/mcp)/.exec(String(d))![1])),
  );
});
afterAll(() => stopTour());

describe('standin apps lint', () => {
  it('passes the bridge tour over stdio and exits 0', async () => {
    const r = await run(['lint', TOUR]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('9 tool(s)');
    expect(r.out).toContain('no findings');
  });

  it('speaks Streamable HTTP, SSE (explicit and by fallback)', async () => {
    expect((await run(['lint', httpUrl])).code).toBe(0);
    const sseUrl = httpUrl.replace(/\/mcp$/, '/sse');
    expect((await run(['lint', `sse+${sseUrl}`])).out).toContain('9 tool(s)');
    expect((await run(['lint', sseUrl])).out).toContain('9 tool(s)');
    expect((await run(['lint', sseUrl, '--transport', 'sse'])).code).toBe(0);
  });

  it('reports each broken rule with its path and exits 1; --json gives the same findings', async () => {
    const r = await run(['lint', BAD]);
    expect(r.code).toBe(1);
    for (const needle of [
      'error    $.tools[0](list_items).annotations.destructiveHint  destructiveHint is required',
      'toolInvocation.length',
      "$.samples[0](list_items).result.structuredContent.items[1]  must be of type string (outputSchema of 'list_items')",
      'fileParams.declared',
      'fileParams.optional',
      'template.mimeType',
      'csp.origin',
      'domain.required',
    ])
      expect(r.out).toContain(needle);
    const j = await run(['lint', BAD, '--json']);
    expect(j.code).toBe(1);
    const parsed = JSON.parse(j.out);
    expect(parsed.tools).toEqual(['list_items', 'upload_photo']);
    expect(parsed.findings.map((f: any) => f.rule)).toContain('outputSchema.mismatch');
    for (const f of parsed.findings) expect(Object.keys(f).sort()).toEqual(['message', 'path', 'rule', 'severity']);
  });

  it('--dev turns submission-only rules into warnings; --sample adds calls', async () => {
    const r = await run([
      'lint',
      BAD,
      '--dev',
      '--json',
      '--sample',
      'upload_photo={"photo":{"file_id":"f","download_url":"https://x.example/f"}}',
    ]);
    const parsed = JSON.parse(r.out);
    expect(parsed.findings.find((f: any) => f.rule === 'domain.required').severity).toBe('warning');
    expect(parsed.samples.map((s: any) => s.tool)).toEqual(['upload_photo', 'list_items']);
  });

  it('exits 2 on bad usage and unreachable servers', async () => {
    expect((await run(['lint'])).code).toBe(2);
    expect((await run(['lint', TOUR, '--sample', 'show_board={bad'])).code).toBe(2);
    const r = await run(['lint', 'http://127.0.0.1:9/mcp']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/error:/);
    expect((await run(['frobnicate'])).code).toBe(2);
  });
});

describe('standin apps lint, calibrated on official apps', () => {
  const BUDGET = 'node test/apps/fixtures/budget-server.mjs';
  const HELLO = 'node test/apps/fixtures/hello-skybridge-server.mjs --vendor openai';

  it('finds nothing in an app whose tools the ext-apps registerAppTool helper registered (it adds the flat ui/resourceUri)', async () => {
    const r = await run(['lint', BUDGET, '--json']);
    const parsed = JSON.parse(r.out);
    expect(parsed.tools).toEqual(['show-budget', 'commit-budget', 'show-budget-classic']);
    expect(parsed.findings).toEqual([]);
    expect(r.code).toBe(0);
  });

  it('asks for the outputSchema of an Apps SDK hello-world style app as a warning, not an error', async () => {
    const r = await run(['lint', HELLO, '--json', '--dev'], 'openai');
    const findings = JSON.parse(r.out).findings;
    const missing = findings.filter((f: any) => f.rule === 'outputSchema.missing');
    expect(missing.map((f: any) => `${f.severity} ${f.path}`).sort()).toEqual([
      'warning $.tools[0].outputSchema',
      'warning $.tools[1].outputSchema',
    ]);
    expect(findings.filter((f: any) => f.severity === 'error')).toEqual([]);
    expect(r.code).toBe(0);
  });

  it('reports the same findings as the host page for the same server (one code path)', async () => {
    const standin = await startTestStandin({ seed: false, modules: [{ name: 'core', migrations: coreMigrations }, appsModule] });
    try {
      for (const server of [BAD, BUDGET, TOUR]) {
        standin.ctx.services.apps.allowCommand(server);
        const host = await standin.req('POST', '/apps/api/connect', { body: { server } });
        expect(host.status, JSON.stringify(host.body)).toBe(200);
        const cli = JSON.parse((await run(['lint', server, '--json'])).out);
        expect(host.body.findings, server).toEqual(cli.findings);
      }
    } finally {
      await standin.close();
    }
  });
});

describe('standin apps validate-submission', () => {
  const good = 'src/apps/submission/fixtures/good.json';
  const bad = 'src/apps/submission/fixtures/bad.json';
  it('accepts the good file with vendor openai (the published $schema URL) and exits 0', async () => {
    const r = await run(['validate-submission', good], 'openai');
    expect(r.code).toBe(0);
    expect(r.out).toContain('no findings');
  });
  it('refuses the same file for another vendor: $schema is the vendor’s constant', async () => {
    const r = await run(['validate-submission', good, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).findings.map((f: any) => f.path)).toEqual(['$.$schema']);
  });
  it('lists every problem of the bad file by JSON path and exits 1', async () => {
    const r = await run(['validate-submission', bad], 'openai');
    expect(r.code).toBe(1);
    expect(r.out).toContain('$.app_info.subtitle must be at most 30 characters');
    expect(r.out).toContain('$.negative_test_cases[0].description is required');
  });
  it('compares with the live server with --server', async () => {
    const r = await run(['validate-submission', good, '--server', httpUrl, '--json'], 'openai');
    const rules = JSON.parse(r.out).findings.map((f: any) => f.rule);
    expect(rules).toContain('server.missingTool');
    expect(r.code).toBe(1);
  });
  it('exits 2 when the file cannot be read', async () => {
    expect((await run(['validate-submission', 'nope.json'])).code).toBe(2);
  });
});

describe('standin apps open', () => {
  it('starts Standin with the host allowed to run the command, and links to it', async () => {
    const host = await startAppsHost(TOUR, {
      settings: { ...settings(), port: 0, widgetPort: 0, data: mkdtempSync(join(tmpdir(), 'standin-apps-open-')), logLevel: 'silent' },
      boot: createStandin,
    });
    try {
      const u = new URL(host.link);
      expect(u.pathname).toBe('/apps');
      expect(u.searchParams.get('server')).toBe(TOUR);
      const r = await fetch(`${u.origin}/apps/api/connect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ server: TOUR }),
      });
      expect(r.status).toBe(200);
      expect((await r.json()).tools).toHaveLength(9);
    } finally {
      await host.close();
    }
  });
});
