// The server's code cache (dist/standin.cjs.cache, src/core/code-cache.ts): what a start compiles, made by a
// start of the built server on a scratch folder (`serve`, its first requests, a SIGTERM) that writes it as it
// exits. Settings of this shell (STANDIN_*) are not the scratch start's. Without a cache every start still
// works, compiling the script as it goes: a start that fails here is told, and the build goes on.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CACHE = 'dist/standin.cjs.cache';
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('STANDIN_')));
const data = mkdtempSync(join(tmpdir(), 'standin-code-cache-'));
rmSync(CACHE, { force: true });
const child = spawn(process.execPath, ['dist/main.js', 'serve', '--port', '0'], {
  env: { ...env, STANDIN_DATA: data, STANDIN_WRITE_CODE_CACHE: '1' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let out = '';
const exited = new Promise((resolve) => child.on('close', (code) => resolve(code)));
try {
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no banner within 60 s')), 60_000);
    const read = (d) => {
      out += d;
      const m = /Standin is listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) resolve(m[1], clearTimeout(timer));
    };
    child.stdout.on('data', read);
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => reject(new Error(`it exited with ${code}`)));
  });
  for (const path of ['/healthz', '/readyz']) await (await fetch(`${url}${path}`)).text();
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0 || !existsSync(CACHE)) throw new Error(`it exited with ${code}${existsSync(CACHE) ? '' : ', no cache written'}`);
} catch (err) {
  child.kill('SIGKILL');
  console.warn(`build: no code cache (${err.message}); every start compiles dist/standin.cjs.\n${out.slice(-2000)}`);
} finally {
  rmSync(data, { recursive: true, force: true });
}
