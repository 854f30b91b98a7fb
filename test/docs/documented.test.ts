import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectServer, listAllTools, parseServerSpec } from '../../src/apps/mcp.js';
import { submissionSchemaUrl } from '../../src/apps/submission/schema.js';
import { createIdp } from '../identity/idp.js';
import { ensureBuilt, freshDatabaseUrl, root } from '../process.js';
import { listedCommands, plan, type Fixtures, type Plan } from './commands.js';
import { CURL_CHECKS, CURL_NOT_RUN, TOUR_NOT_RUN, tourPlaceholders } from './curl.js';
import { removeDir, standinOnPath, startLive, stop, userEnv, waitFor, type Live } from './instance.js';
import { fences, pages, sectionShellBlocks, shellCommands, shownCommands } from './markdown.js';
import { json, Shell, type Ran } from './shell.js';

/**
 * The pages run as written: every command of Standin that README.md, docs/*.md and the bridge tour's README
 * show, the curl lines of docs/*.md, and the README's tour, pasted into bash against a live
 * `node dist/main.js serve` (SQLite: the pages' commands are the same on both stores), with the keys its
 * first-start banner printed.
 */
const dir = mkdtempSync(join(tmpdir(), 'standin-docs-run-'));
const bin = standinOnPath(dir);
let live: Live;
let tour: ChildProcess;
let fixtures: Fixtures;
let hook: { server: Server; url: string; received: { headers: Record<string, string>; body: string }[] };
const children: ChildProcess[] = [];

const docPages = () => [
  ...pages(root),
  { file: 'examples/bridge-tour/README.md', text: readFileSync(join(root, 'examples/bridge-tour/README.md'), 'utf8') },
];

/** A submission file that lists exactly the bridge tour's tools, with their hints (for `--server`). */
async function submissionForTour(mcpUrl: string): Promise<string> {
  const client = await connectServer(parseServerSpec(mcpUrl), { vendor: 'vendor', stderr: 'ignore' });
  const tools = await listAllTools(client).finally(() => client.close());
  const file = JSON.parse(readFileSync(join(root, 'src/apps/submission/fixtures/good.json'), 'utf8'));
  // The page's command names no --vendor: the file is made for the default one.
  file.$schema = submissionSchemaUrl({ vendor: 'vendor' });
  file.tools = Object.fromEntries(
    tools.map((t) => [
      t.name,
      {
        annotations: {
          readOnlyHint: t.annotations?.readOnlyHint ?? false,
          openWorldHint: t.annotations?.openWorldHint ?? false,
          destructiveHint: t.annotations?.destructiveHint ?? false,
        },
        justifications: {
          read_only_justification: `What ${t.name} reads.`,
          open_world_justification: `What ${t.name} reaches.`,
          destructive_justification: `What ${t.name} changes.`,
        },
      },
    ]),
  );
  const path = join(dir, 'app.json');
  writeFileSync(path, JSON.stringify(file, null, 2));
  return path;
}

function startHook(): Promise<typeof hook> {
  const received: (typeof hook)['received'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` }),
    ),
  );
}

beforeAll(async () => {
  ensureBuilt();
  tour = spawn(process.execPath, ['examples/bridge-tour/server.mjs', '--http', '0'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const mcpUrl = (await waitFor(tour, /(http:\S+\/mcp)/)).match[1];
  live = await startLive(userEnv(bin));
  hook = await startHook();
  const submission = join(dir, 'chatgpt-app-submission.json');
  copyFileSync(join(root, 'src/apps/submission/fixtures/good.json'), submission);
  fixtures = {
    mcpUrl,
    submission,
    submissionForTour: await submissionForTour(mcpUrl),
    databaseUrl: process.env.STANDIN_TEST_DATABASE_URL ? await freshDatabaseUrl('docs') : undefined,
  };
}, 120_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  tour?.kill();
  if (live) await stop(live.child);
  hook?.server.close();
  removeDir(dir);
  if (live) removeDir(live.data);
});

/** Runs a server command until it shows its address, checks that the address answers, stops it: exit 0. */
async function runServer(p: Extract<Plan, { kind: 'serve' | 'open' }>): Promise<string | null> {
  const data = mkdtempSync(join(tmpdir(), 'standin-docs-serve-'));
  const child = spawn('bash', ['-c', `exec ${p.command}`], {
    cwd: root,
    env: userEnv(bin, { STANDIN_DATA: data, STANDIN_PORT: '0', ...p.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  try {
    const shows = p.kind === 'serve' ? /listening on (http:\/\/[^\s"]+)/ : /App host: (http:\/\/\S+)/;
    const link = (await waitFor(child, shows)).match[1];
    const res = await fetch(p.kind === 'serve' ? `${link}/healthz` : link);
    const code = await stop(child);
    if (res.status !== 200 || code !== 0) return `${link} answered ${res.status}; the process exited with ${code}`;
    return null;
  } catch (err) {
    child.kill('SIGKILL');
    return (err as Error).message;
  } finally {
    removeDir(data);
  }
}

describe('the pages, run as written', () => {
  it('every command of Standin a page shows runs, and exits as documented', async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const shell = new Shell(root, userEnv(bin, { STANDIN_DATA: live.data }));
    const failures: string[] = [];
    const seen = new Set<string>();
    let ran = 0;
    try {
      for (const page of docPages()) {
        for (const shown of shownCommands(page.file, page.text)) {
          const where = `${shown.file}:${shown.line}`;
          const plans: Plan[] =
            shown.text === 'node dist/main.js <command>'
              ? listedCommands(readme).map((command) => ({ kind: 'run', command, exit: 0 }))
              : [plan(shown, fixtures)];
          for (const p of plans) {
            if (p.kind === 'skip' || seen.has(p.command)) continue;
            seen.add(p.command);
            ran++;
            if (p.kind !== 'run') {
              const failed = await runServer(p);
              if (failed) failures.push(`${where} ${p.command}: ${failed}`);
              continue;
            }
            const r = await shell.run(p.command, 120_000);
            if (r.rc !== p.exit || /unknown command/.test(r.err))
              failures.push(`${where} ${p.command}: exit ${r.rc} (documented ${p.exit})\n${r.out.slice(0, 2000)}\n${r.err.slice(0, 2000)}`);
          }
        }
      }
    } finally {
      shell.close();
    }
    expect(failures).toEqual([]);
    // The pages name the commands of the areas (trigger, apps): they are among what ran.
    expect([...seen].some((c) => / trigger batch\.completed/.test(c))).toBe(true);
    expect([...seen].some((c) => / apps lint /.test(c))).toBe(true);
    expect(ran).toBeGreaterThan(20);
  }, 600_000);

  it('the curl lines of docs/*.md answer as their pages say', async () => {
    const idp = await createIdp('https://token.actions.githubusercontent.com');
    const env = { B: live.url, KEY: live.keys.platform, ADMIN_KEY: live.keys.admin };
    const shell = new Shell(dir, userEnv(bin, { ...env, STANDIN_DATA: live.data }));
    const state = { live, dir, idp, answers: new Map<string, Ran>() };
    const failures: string[] = [];
    let checked = 0;
    try {
      for (const page of docPages().filter((p) => p.file.startsWith('docs/'))) {
        for (const fence of fences(page.text)) {
          for (const c of shellCommands(fence)) {
            if (!/(^|\s)curl\s/.test(c.text)) continue;
            const where = `${page.file}:${c.line}`;
            if (CURL_NOT_RUN.some((n) => c.text.includes(n.shown))) continue;
            const check = CURL_CHECKS.find((k) => c.text.includes(k.shown));
            if (!check) {
              failures.push(`${where}: a curl line with no check in test/docs/curl.ts: ${c.text}`);
              continue;
            }
            const command = await check.prepare(
              state,
              c.text
                .replaceAll('http://127.0.0.1:8080', live.url)
                .replaceAll('http://127.0.0.1:8081/admin/v1/metrics', `${live.url}/admin/v1/metrics`),
              shell,
            );
            const r = await shell.run(command);
            state.answers.set(check.shown, r);
            checked++;
            try {
              expect(r.rc, `${r.out}\n${r.err}`).toBe(0);
              check.check(r, state);
            } catch (err) {
              failures.push(`${where} ${command}\n${(err as Error).message}`);
            }
          }
        }
      }
    } finally {
      shell.close();
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(CURL_CHECKS.length);
  }, 120_000);

  it("the README's tour runs as pasted and answers as the README says", async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const shell = new Shell(root, userEnv(bin, { STANDIN_DATA: live.data }));
    const ran: Ran[] = [];
    try {
      for (const block of sectionShellBlocks(readme, 'A one-minute tour')) {
        for (const c of shellCommands(block)) {
          if (TOUR_NOT_RUN.some((n) => c.text === n.shown)) continue;
          let command = c.text;
          for (const [from, to] of tourPlaceholders(live, hook.url)) command = command.replaceAll(from, to);
          ran.push(await shell.run(command, 120_000));
        }
      }
    } finally {
      shell.close();
    }
    for (const r of ran) expect(r.rc, `${r.command}\n${r.out}\n${r.err}`).toBe(0);
    const answer = (needle: string) => {
      const found = ran.filter((r) => r.command.includes(needle));
      expect(found, needle).toHaveLength(1);
      return found[0];
    };

    const groups = answer('ad_groups?campaign_id=cmp_demo_clicks');
    expect(groups.status).toBe(200);
    expect(json(groups).object).toBe('list');
    // Every ad group of the campaign bills per click, as cmp_demo_clicks does.
    for (const g of json(groups).data) expect(g.bidding_config.billing_event_type).toBe('click');

    const audiences = answer('custom_audiences?intended_use=bid_multiplier');
    expect(audiences.status).toBe(200);
    expect(json(audiences).data.map((a: { id: string }) => a.id)).toContain('aud_demo_loyal');

    const created = answer('"name": "Road running"');
    expect(created.status).toBe(200);
    expect(json(created)).toMatchObject({
      name: 'Road running',
      bidding_config: { custom_audience_bid_multipliers: [{ custom_audience_id: 'aud_demo_loyal', bid_multiplier_micros: 1500000 }] },
    });

    const refused = answer('"name": "Oops"');
    expect(refused.status).toBe(400);
    expect(json(refused).error.param).toBe('bidding_config.billing_event_type');

    const clock = answer('/admin/v1/clock/advance');
    expect(clock.status).toBe(200);
    expect(json(clock)).toMatchObject({ object: 'clock', offset_ms: 72 * 3600 * 1000 });

    const log = answer('/admin/v1/requests?limit=5');
    expect(log.status).toBe(200);
    const logged = json(log).data as { method: string; path: string; status: number }[];
    expect(logged).toHaveLength(5);
    expect(logged.some((l) => l.path.startsWith('/ads/v1/ad_groups') && l.status === 400)).toBe(true);

    const reset = answer('/admin/v1/reset');
    expect(json(reset)).toMatchObject({ object: 'reset', reset: true });

    const endpoint = answer('/webhook_endpoints');
    expect(endpoint.status).toBe(201);
    expect(json(endpoint)).toMatchObject({ url: hook.url, event_types: ['batch.completed'] });
    const secret = json(endpoint).secret as string;
    expect(secret).toMatch(/^whsec_/);

    // `trigger` wrote into the instance's store; the instance delivers it, signed with the endpoint's secret.
    const event = json(answer('trigger batch.completed'));
    expect(event).toMatchObject({ object: 'event', type: 'batch.completed' });
    for (let i = 0; i < 300 && !hook.received.some((d) => d.body.includes(event.id)); i++) await new Promise((r) => setTimeout(r, 100));
    const delivery = hook.received.find((d) => d.body.includes(event.id));
    expect(delivery, 'the triggered event reached the endpoint').toBeDefined();
    expect(new Webhook(secret).verify(delivery!.body, delivery!.headers)).toMatchObject({ id: event.id, type: 'batch.completed' });

    const fault = answer('/admin/v1/faults');
    expect(fault.status).toBeLessThan(300);
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${live.url}/v1/threads/runs`, { method: 'POST' });
      statuses.push([r.status, r.headers.get('retry-after')]);
    }
    expect(statuses.slice(0, 3)).toEqual([
      [429, '1'],
      [429, '1'],
      [429, '1'],
    ]);
    expect(statuses[3][0]).not.toBe(429);

    const lint = answer('apps lint');
    expect(lint.out).toMatch(/9 tool\(s\)/);
    // `open "$B/apps"` opens a browser: the page it opens answers.
    expect((await fetch(`${live.url}/apps`)).status).toBe(200);
  }, 180_000);
});
