import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, root } from '../process.js';

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
  /** nginx's HTTP and HTTPS ports (8080, 8443), the instances' HTTP ports (8081, 8082). */
  http: number;
  https: number;
  instances: [number, number];
  /** nginx's widget ports (8090, 8444 with TLS), the instances' --widget-port (8091, 8092). */
  widgets: number;
  widgetsHttps: number;
  instancesWidgets: [number, number];
  /** nginx's mTLS token and API ports (9440, 9450), the instances' --mtls-port (9441, 9442) and --mtls-api-port (9451, 9452). */
  mtlsToken: number;
  instancesMtlsToken: [number, number];
  mtlsApi: number;
  instancesMtlsApi: [number, number];
}

/** Free ports for every port of the recipe. */
export async function freeRecipePorts(): Promise<RecipePorts> {
  const two = async (): Promise<[number, number]> => [await freePort(), await freePort()];
  return {
    http: await freePort(),
    https: await freePort(),
    instances: await two(),
    widgets: await freePort(),
    widgetsHttps: await freePort(),
    instancesWidgets: await two(),
    mtlsToken: await freePort(),
    instancesMtlsToken: await two(),
    mtlsApi: await freePort(),
    instancesMtlsApi: await two(),
  };
}

/** The recipe's port → the test's, for every port of `ports`. */
export function portMap(ports: RecipePorts): [number, number][] {
  return [
    [8080, ports.http],
    [8443, ports.https],
    [8081, ports.instances[0]],
    [8082, ports.instances[1]],
    [8090, ports.widgets],
    [8444, ports.widgetsHttps],
    [8091, ports.instancesWidgets[0]],
    [8092, ports.instancesWidgets[1]],
    [9440, ports.mtlsToken],
    [9441, ports.instancesMtlsToken[0]],
    [9442, ports.instancesMtlsToken[1]],
    [9450, ports.mtlsApi],
    [9451, ports.instancesMtlsApi[0]],
    [9452, ports.instancesMtlsApi[1]],
  ];
}

/**
 * The deployment recipe's nginx configuration (examples/deploy/nginx.conf), with its ports replaced by the
 * given ones and its /etc/standin/ by `etc` (where the test keeps the certificate). Everything else is the
 * file as documented.
 */
export function nginxConfig(ports: RecipePorts, etc: string): string {
  let text = readFileSync(join(root, 'examples/deploy/nginx.conf'), 'utf8');
  if (!text.includes('/etc/standin/'))
    throw new Error('examples/deploy/nginx.conf changed (no /etc/standin/): update test/deploy/balancer.ts');
  text = text.replaceAll('/etc/standin/', `${etc.replace(/\/$/, '')}/`);
  for (const [recipe, port] of portMap(ports)) {
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

/** A running nginx: its URLs (plain and TLS), its master's pid, and a stop that waits for it to exit. */
export interface Balancer {
  url: string;
  httpsUrl: string;
  pid: number;
  /** What nginx wrote to its error log so far. */
  errors(): string;
  stop(): Promise<void>;
}

/** Whether a process runs (a zombie nobody reaped, as the daemon's parent may be in a container, does not). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
};

/**
 * Starts nginx as the recipe does (`nginx -p … -c … -e …`, which returns once nginx runs in the background)
 * with the recipe on `ports` and `etc` for /etc/standin/, and resolves once it accepts connections.
 */
export async function startNginx(binary: string, ports: RecipePorts, etc: string): Promise<Balancer> {
  const listenPort = ports.http;
  const prefix = mkdtempSync(join(tmpdir(), 'standin-nginx-'));
  // Run as root, nginx's workers run as nobody: they must reach the temporary files' folder.
  chmodSync(prefix, 0o755);
  mkdirSync(join(prefix, 'tmp'), { mode: 0o777 });
  chmodSync(join(prefix, 'tmp'), 0o777);
  writeFileSync(join(prefix, 'nginx.conf'), nginxConfig(ports, etc));
  const args = ['-p', `${prefix}/`, '-c', join(prefix, 'nginx.conf'), '-e', join(prefix, 'error.log')];
  const log = () => (existsSync(join(prefix, 'error.log')) ? readFileSync(join(prefix, 'error.log'), 'utf8') : '');
  execFileSync(binary, [...args, '-t'], { stdio: 'pipe' });
  // The recipe's next command runs as soon as this returns: nginx must not hold the terminal.
  try {
    execFileSync(binary, args, { stdio: 'pipe', timeout: 10_000 });
  } catch (err) {
    throw new Error(`nginx did not start (or did not return): ${(err as Error).message}\n${log()}`);
  }
  const pid = Number(readFileSync(join(prefix, 'nginx.pid'), 'utf8').trim());
  for (let i = 0; !(await accepts(listenPort)); i++) {
    if (!alive(pid) || i > 200) {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
      throw new Error(`nginx did not start:\n${log()}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    url: `http://127.0.0.1:${listenPort}`,
    httpsUrl: `https://localhost:${ports.https}`,
    pid,
    errors: log,
    async stop() {
      // The recipe's stop: a graceful shutdown (SIGQUIT to the master), then wait for it to go.
      if (alive(pid)) execFileSync(binary, [...args, '-s', 'quit'], { stdio: 'pipe' });
      for (let i = 0; alive(pid) && i < 400; i++) await new Promise((r) => setTimeout(r, 25));
      if (alive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}
