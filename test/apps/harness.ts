import { existsSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type ElementHandle, type Frame, type Page } from 'playwright-core';
import { coreMigrations } from '../../src/core/tables.js';
import { appsModule } from '../../src/apps/module.js';
import type { Settings } from '../../src/core/settings.js';
import { startTestStandin, type TestStandin } from '../helpers.js';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/** Builds dist/web (the host page and the bridge) once per test file. */
export async function buildWeb() {
  // `npm test` builds first; rebuilding here while another test file reads dist/web would race.
  if (
    existsSync(new URL('../../dist/web/apps/host.js', import.meta.url)) &&
    existsSync(new URL('../../dist/web/apps/bridge.js', import.meta.url))
  )
    return;
  const script: string = new URL('../../scripts/build-web.mjs', import.meta.url).href;
  await import(script);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** Runs the bridge tour example over HTTP; resolves with its /mcp URL. */
export function startTour(extraArgs: string[] = [], vendor = 'vendor'): Promise<McpHttpServer> {
  return startMcpServer('examples/bridge-tour/server.mjs', ['--vendor', vendor, ...extraArgs]);
}

export interface McpHttpServer {
  url: string;
  base: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** Runs an MCP server script with `--http 0`; resolves with the /mcp URL it prints. */
export async function startMcpServer(script: string, extraArgs: string[] = []): Promise<McpHttpServer> {
  const proc = spawn(process.execPath, [script, '--http', '0', ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${script} did not start: ${out}`)), 15_000);
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.stderr!.on('data', (d) => (out += d));
    proc.once('exit', (code) => reject(new Error(`${script} exited (${code}): ${out}`)));
  });
  return {
    url,
    base: url.replace(/\/mcp$/, ''),
    proc,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

/** A Standin listening on a free port with the core and the apps module only (the host needs nothing else). */
export async function startHost(vendor = 'vendor', settings: Partial<Settings> = {}): Promise<TestStandin & { url: string }> {
  const s = await startTestStandin({
    settings: { vendor, widgetPort: 0, ...settings },
    seed: false,
    modules: [{ name: 'core', migrations: coreMigrations }, appsModule],
  });
  const url = await s.listen();
  return Object.assign(s, { url });
}

/** A plain HTTP server on another origin, answering with CORS open: the CSP decides whether a component reaches it. */
export async function startEcho(): Promise<{ origin: string; hits: string[]; server: Server }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'access-control-allow-origin': '*', 'content-type': 'text/plain' });
    res.end('echo');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
}

/** The frame of the newest component of a turn (by tool name), once its bridge is ready. */
export async function widgetFrame(page: Page, tool: string, nth = -1): Promise<Frame> {
  const iframes = page.locator(`article.turn[data-tool="${tool}"] iframe`);
  await iframes.first().waitFor();
  const count = await iframes.count();
  const handle = await iframes.nth(nth < 0 ? count + nth : nth).elementHandle();
  return componentFrame(handle!);
}

/**
 * The component's frame behind a frame element of the host page: the inner frame of the sandbox proxy the element
 * shows, once the component's bridge is ready.
 */
export async function componentFrame(outer: ElementHandle): Promise<Frame> {
  const proxy = (await outer.contentFrame())!;
  for (;;) {
    const inner = proxy.childFrames()[0];
    if (inner) {
      await waitInFrame(inner, () => (window as any).__standinBridge !== undefined);
      return inner;
    }
    await proxy.waitForSelector('iframe', { state: 'attached' });
  }
}

/**
 * `frame.waitForFunction` polled on a timer: a component's frame below the fold runs no animation frames
 * (Chromium throttles offscreen cross-origin frames), so the default ‘raf’ polling would wait forever.
 */
export function waitInFrame<A>(frame: Frame, fn: (arg: A) => unknown, arg?: A): Promise<unknown> {
  return frame.waitForFunction(fn as (arg: unknown) => unknown, arg, { polling: 50 });
}

/** Opens the host page connected to a server, optionally calling a tool through a deep link. */
export async function openHost(page: Page, hostUrl: string, server: string, tool?: string, args?: unknown) {
  const q = new URLSearchParams({ server });
  if (tool) q.set('tool', tool);
  if (args !== undefined) q.set('args', JSON.stringify(args));
  await page.goto(`${hostUrl}/apps?${q}`);
  await page.waitForSelector('body[data-ready="true"]');
}
