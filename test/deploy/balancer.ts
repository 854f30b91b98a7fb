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

/** The recipe's ports (examples/deploy/nginx.conf) and the free ones a test runs it with. */
export interface RecipePorts {
  /** nginx's HTTP port (8080), the instances' HTTP ports (8081, 8082). */
  http: number;
  instances: [number, number];
  /** nginx's mTLS token and API ports (9440, 9450), the instances' --mtls-port (9441, 9442) and --mtls-api-port (9451, 9452). */
  mtlsToken: number;
  instancesMtlsToken: [number, number];
  mtlsApi: number;
  instancesMtlsApi: [number, number];
}

/**
 * The deployment recipe's nginx configuration (examples/deploy/nginx.conf), with its ports replaced by the
 * given ones. Everything else is the file as documented.
 */
export function nginxConfig(ports: RecipePorts): string {
  let text = readFileSync(join(root, 'examples/deploy/nginx.conf'), 'utf8');
  const map: [number, number][] = [
    [8080, ports.http],
    [8081, ports.instances[0]],
    [8082, ports.instances[1]],
    [9440, ports.mtlsToken],
    [9441, ports.instancesMtlsToken[0]],
    [9442, ports.instancesMtlsToken[1]],
    [9450, ports.mtlsApi],
    [9451, ports.instancesMtlsApi[0]],
    [9452, ports.instancesMtlsApi[1]],
  ];
  for (const [recipe, port] of map) {
    const at = new RegExp(`127\\.0\\.0\\.1:${recipe}(?=[; ])`, 'g');
    if (!at.test(text)) throw new Error(`examples/deploy/nginx.conf changed (no 127.0.0.1:${recipe}): update test/deploy/balancer.ts`);
    text = text.replace(at, `127.0.0.1:${port}`);
  }
  return text;
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

/** Starts nginx as a real process with the recipe on `ports`, and resolves once it accepts connections. */
export async function startNginx(binary: string, ports: RecipePorts): Promise<Balancer> {
  const listenPort = ports.http;
  const prefix = mkdtempSync(join(tmpdir(), 'standin-nginx-'));
  // Run as root, nginx's workers run as nobody: they must reach the temporary files' folder.
  chmodSync(prefix, 0o755);
  mkdirSync(join(prefix, 'tmp'), { mode: 0o777 });
  chmodSync(join(prefix, 'tmp'), 0o777);
  writeFileSync(join(prefix, 'nginx.conf'), nginxConfig(ports));
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
