import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from '../process.js';

/** The nginx binary (Debian's `nginx` package), or undefined when it is not installed. */
export function nginxBinary(): string | undefined {
  for (const p of ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx']) if (existsSync(p)) return p;
  try {
    return execFileSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The deployment recipe's nginx configuration (examples/deploy/nginx.conf), with its listen port and its
 * two upstream servers replaced by the given ones. Everything else is the file as documented.
 */
export function nginxConfig(listenPort: number, upstreamPorts: number[]): string {
  const text = readFileSync(join(root, 'examples/deploy/nginx.conf'), 'utf8');
  const servers = /^( *)server 127\.0\.0\.1:8081;\n\1server 127\.0\.0\.1:8082;\n/m;
  if (!servers.test(text) || !text.includes('listen 127.0.0.1:8080;'))
    throw new Error('examples/deploy/nginx.conf changed: update test/deploy/balancer.ts');
  return text
    .replace(servers, (_, indent: string) => upstreamPorts.map((p) => `${indent}server 127.0.0.1:${p};\n`).join(''))
    .replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${listenPort};`);
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** A running nginx: its URL, and a stop that waits for it to exit. */
export interface Balancer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts nginx as a real process on `listenPort`, balancing over `upstreamPorts`, and resolves once it accepts connections. */
export async function startNginx(binary: string, listenPort: number, upstreamPorts: number[]): Promise<Balancer> {
  const prefix = mkdtempSync(join(tmpdir(), 'standin-nginx-'));
  // Run as root, nginx's workers run as nobody: they must reach the temporary files' folder.
  chmodSync(prefix, 0o755);
  mkdirSync(join(prefix, 'tmp'), { mode: 0o777 });
  chmodSync(join(prefix, 'tmp'), 0o777);
  writeFileSync(join(prefix, 'nginx.conf'), nginxConfig(listenPort, upstreamPorts));
  const args = ['-p', `${prefix}/`, '-c', join(prefix, 'nginx.conf'), '-e', join(prefix, 'error.log')];
  execFileSync(binary, [...args, '-t'], { stdio: 'pipe' });
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; !(await accepts(listenPort)); i++) {
    if (child.exitCode !== null || i > 200) {
      child.kill('SIGKILL');
      const log = existsSync(join(prefix, 'error.log')) ? readFileSync(join(prefix, 'error.log'), 'utf8') : '';
      throw new Error(`nginx did not start:\n${output}\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    url: `http://127.0.0.1:${listenPort}`,
    child,
    async stop() {
      // SIGQUIT: nginx's graceful shutdown.
      if (child.exitCode === null) child.kill('SIGQUIT');
      await exited;
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}
