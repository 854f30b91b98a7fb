import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { root } from '../process.js';
import { portMap, type RecipePorts } from './balancer.js';

/** The recipe's files (examples/deploy/), as docs/deploy.md installs them under /etc/standin/. */
export const RECIPE = join(root, 'examples/deploy');

/** What the test puts where the recipe names this machine's system: its folders, servers and addresses. */
export interface RecipeSite {
  /** Stands for / : the recipe's /etc/standin/ is `<dir>/etc/`, /var/lib/standin/ is `<dir>/var/`. */
  dir: string;
  ports: RecipePorts;
  databaseUrl: string;
  redisUrl: string;
  /** The webhook receiver on "the team's network" (the recipe's 10.0.0.7:9000) and its address. */
  receiverUrl: string;
  receiverAddress: string;
}

/** The recipe's text with its system paths, servers, addresses and ports replaced by the test's. */
export function onSite(text: string, site: RecipeSite): string {
  const { ports } = site;
  let out = text
    .replaceAll('/etc/standin/', `${site.dir}/etc/`)
    .replaceAll('/var/lib/standin/', `${site.dir}/var/`)
    .replaceAll('/opt/standin/', `${root}/`)
    .replaceAll('/opt/standin', root)
    .replaceAll('redis://127.0.0.1:6379', site.redisUrl)
    .replaceAll('http://10.0.0.7:9000/standin', site.receiverUrl)
    .replaceAll('10.0.0.7', site.receiverAddress)
    // The certificate the test makes is for localhost (the recipe's is for standin.internal).
    .replaceAll('https://standin.internal:8443', `https://localhost:${ports.https}`)
    .replaceAll('https://standin.internal:8444', `https://localhost:${ports.widgetsHttps}`);
  for (const [recipe, port] of portMap(ports)) out = out.replace(new RegExp(`=${recipe}$`, 'gm'), `=${port}`);
  return out;
}

/** A secret file as the recipe has the operator write it: readable by its owner only. */
function secretFile(path: string, value: string) {
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/**
 * Installs the recipe as docs/deploy.md does: the environment files, the config file (plus `extra` root
 * sections the test needs, such as rate limits of its own model names) and the secrets it reads by file.
 */
export function installRecipe(
  site: RecipeSite,
  secrets: { adminKey: string; apiKey: string; webhookSecret: string },
  extra: Record<string, unknown> = {},
): void {
  const etc = join(site.dir, 'etc');
  mkdirSync(join(etc, 'secrets'), { recursive: true, mode: 0o700 });
  mkdirSync(join(site.dir, 'var'), { recursive: true });
  for (const f of ['standin.env', 'instance-1.env', 'instance-2.env'])
    writeFileSync(join(etc, f), onSite(readFileSync(join(RECIPE, f), 'utf8'), site));
  const config = parse(onSite(readFileSync(join(RECIPE, 'standin.yaml'), 'utf8'), site)) as Record<string, unknown>;
  writeFileSync(join(etc, 'standin.yaml'), stringify({ ...config, ...extra }));
  secretFile(join(etc, 'secrets/admin-key'), secrets.adminKey);
  secretFile(join(etc, 'secrets/app-key'), secrets.apiKey);
  secretFile(join(etc, 'secrets/webhook-secret'), secrets.webhookSecret);
  secretFile(join(etc, 'secrets/database-url'), site.databaseUrl);
}

/** The `[Service]` settings of the recipe's unit for instance `i`, specifiers expanded (repeated keys kept in order). */
export function unitService(i: number): [string, string][] {
  const text = readFileSync(join(RECIPE, 'standin@.service'), 'utf8').replaceAll('%i', String(i));
  const section = /^\[Service\]\n([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(text)?.[1] ?? '';
  return section
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('#'))
    .map((l) => l.split(/=(.*)/s, 2) as [string, string]);
}

/** An EnvironmentFile as systemd reads it: KEY=VALUE lines; comments and blank lines skipped. */
function environmentFile(path: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.trim().startsWith('#'))
      .map((l) => l.split(/=(.*)/s, 2) as [string, string]),
  );
}

/** A Standin started from the unit, and everything it printed. */
export interface UnitProcess {
  child: ChildProcess;
  output(): string;
}

/**
 * Runs instance `i` as systemd would run the recipe's unit: its environment only (the EnvironmentFiles and
 * Environment lines, on site), the folder StateDirectory makes, WorkingDirectory, and ExecStart as written.
 * Resolves once it listens.
 */
export function startUnit(site: RecipeSite, i: number): Promise<UnitProcess> {
  const service = unitService(i);
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: site.dir };
  let exec = '';
  let cwd = root;
  for (const [key, raw] of service) {
    const value = onSite(raw, site);
    if (key === 'EnvironmentFile') Object.assign(env, environmentFile(value));
    else if (key === 'Environment') {
      const [name, v] = value.split(/=(.*)/s, 2);
      env[name] = v;
    } else if (key === 'StateDirectory') mkdirSync(join(site.dir, 'var', value.replace(/^standin\//, '')), { recursive: true });
    else if (key === 'WorkingDirectory') cwd = value;
    else if (key === 'ExecStart') exec = value;
  }
  const [command, ...args] = exec.split(/\s+/);
  // Where node lives elsewhere (a CI's own install), the same command with this node.
  const binary = command === '/usr/bin/node' && !existsSync(command) ? process.execPath : command;
  const child = spawn(binary, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`standin@${i} did not start:\n${out}`)), 60_000);
    const check = () => {
      if (!out.includes('Standin is listening on')) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      resolve({ child, output: () => out });
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`standin@${i} exited with ${code}:\n${out}`)));
  });
}
