import { isAscii } from 'node:buffer';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { startTestStandin } from '../helpers.js';
import { caller, ensureBuilt, freePort, root, serve } from '../process.js';

/**
 * scripts/bundle-options.mjs leaves out of the server bundle what Fastify requires only on a call Standin
 * does not make (its default schema compilers, light-my-request for `inject`): a stand-in module loads
 * each from node_modules on first use. Bundled with the same options, a Fastify app that makes those
 * calls still works, and the bundle does not carry them.
 */
/**
 * `source` written as an entry in a scratch folder of `name` and bundled as the server is: one CommonJS
 * script (`serverScript`: no top-level await).
 */
async function bundleOf(name: string, source: string): Promise<{ dir: string; entry: string; outfile: string; bundle: string }> {
  const dir = join(root, `node_modules/.cache/${name}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, 'entry.mjs');
  writeFileSync(entry, source);
  const { serverScript } = (await import(join(root, 'scripts/bundle-options.mjs'))) as { serverScript: BuildOptions };
  const outfile = join(dir, 'out.cjs');
  await build({ entryPoints: [entry], outfile, ...serverScript, logLevel: 'error' });
  return { dir, entry, outfile, bundle: readFileSync(outfile, 'utf8') };
}

describe('the server bundle', () => {
  it("loads Fastify's on-demand packages from node_modules when they are called", async () => {
    const { dir, outfile, bundle } = await bundleOf(
      'standin-bundle-test',
      `import Fastify from 'fastify';
const app = Fastify();
const n = { type: 'object', properties: { n: { type: 'integer' } } };
app.get('/', { schema: { querystring: n, response: { 200: n } } }, async (r) => ({ n: r.query.n, dropped: true }));
app.inject('/?n=3').then((res) => console.log(res.statusCode, res.body));
`,
    );
    for (const name of ['fast-json-stringify/index.js', 'ajv-compiler/index.js', 'light-my-request/lib/request.js'])
      expect(bundle).not.toContain(name);
    // ajv coerced the query (the default validator compiler), fast-json-stringify dropped what the
    // response schema does not name (the default serializer compiler), inject answered.
    expect(execFileSync(process.execPath, [outfile], { encoding: 'utf8' }).trim()).toBe('200 {"n":3}');
    rmSync(dir, { recursive: true, force: true });
  });

  it("routes as Fastify's own router does, with its matchers compiled on first use", async () => {
    // Prefixes that split nodes as routes are added, parameters (more than four: the params builder's
    // extra array), a wildcard, a trailing slash, constraints (version, host), an unknown URL, a HEAD.
    const { dir, entry, outfile, bundle } = await bundleOf(
      'standin-bundle-router-test',
      `import Fastify from 'fastify';
const app = Fastify({ routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 } });
const echo = async (r) => ({ url: r.routeOptions.url, params: r.params });
for (const p of ['/v1/files', '/v1/files/:id', '/v1/file_batches/:id', '/v1/fine_tuning/jobs', '/v1/f', '/v1/threads/:thread_id/runs/:run_id/steps/:step_id',
  '/a/:b/:c/:d/:e/:f/:g', '/static/*', '/v1/vector_stores/:vs/files/:file/content', '/v1/vector_stores/search', '/healthz', '/h'])
  app.get(p, echo);
app.post('/v1/files/:id', echo);
app.get('/versioned', { constraints: { version: '1.2.0' } }, async () => ({ v: '1.2.0' }));
app.get('/versioned', async () => ({ v: 'none' }));
app.get('/hosted', { constraints: { host: 'a.example' } }, async () => ({ host: 'a' }));
app.get('/hosted', async () => ({ host: 'any' }));
const asks = [['GET', '/v1/files'], ['GET', '/v1/files/file_1'], ['GET', '/v1/files/file_1/'], ['POST', '/v1/files/x'], ['GET', '/v1/file_batches/b'],
  ['GET', '/v1/fine_tuning/jobs'], ['GET', '/v1/f'], ['GET', '/v1/fi'], ['GET', '/v1/threads/t/runs/r/steps/s'], ['GET', '/a/1/2/3/4/5/6'],
  ['GET', '/static/x/y.js'], ['GET', '/v1/vector_stores/search'], ['GET', '/v1/vector_stores/vs_1/files/f%2F1/content'], ['GET', '/healthz'],
  ['GET', '/h'], ['HEAD', '/h'], ['GET', '/nope'], ['GET', '/versioned'], ['GET', '/versioned', { 'accept-version': '1.x' }],
  ['GET', '/hosted', { host: 'a.example' }], ['GET', '/hosted', { host: 'b.example' }]];
(async () => {
  const out = [];
  for (const [method, url, headers] of asks) {
    const res = await app.inject({ method, url, headers });
    out.push([method, url, res.statusCode, res.body]);
  }
  console.log(JSON.stringify(out));
})();
`,
    );
    expect(bundle).toContain('prefixMatchOnFirstUse');
    const bundled = execFileSync(process.execPath, [outfile], { encoding: 'utf8' });
    const direct = execFileSync(process.execPath, [entry], { encoding: 'utf8' });
    expect(JSON.parse(bundled)).toEqual(JSON.parse(direct));
    expect(JSON.parse(bundled)).toContainEqual([
      'GET',
      '/a/1/2/3/4/5/6',
      200,
      JSON.stringify({ url: '/a/:b/:c/:d/:e/:f/:g', params: { b: '1', c: '2', d: '3', e: '4', f: '5', g: '6' } }),
    ]);
    expect(JSON.parse(bundled)).toContainEqual(['GET', '/versioned', 200, '{"v":"none"}']);
    expect(JSON.parse(bundled)).toContainEqual(['GET', '/hosted', 200, '{"host":"a"}']);
    rmSync(dir, { recursive: true, force: true });
  });

  it("is written as a start compiles it: in ASCII, in Node's CommonJS wrapper (scripts/server-script.mjs)", async () => {
    ensureBuilt();
    const script = readFileSync(join(root, 'dist/standin.cjs'));
    expect(isAscii(script)).toBe(true);
    const text = script.toString('latin1');
    expect(text.startsWith('(function (exports, require, module, __filename, __dirname) {')).toBe(true);
    expect(text.endsWith('\n})')).toBe(true);
  });

  it('makes comments, regular expressions and strings ASCII, keeping what they mean, and refuses any other non-ASCII', async () => {
    const { asciiText } = (await import(join(root, 'scripts/server-script.mjs'))) as { asciiText: (text: string) => string };
    const source = [
      '/** Each citation (`【4:0†source】`…) */',
      'const marker = /【(\\d+):(\\d+)†[^】\\n]*】/g; // a comment: 😀 …',
      'const unit = /(ns|µs|ms)/u;',
      "module.exports = [[...'x 【4:0†a.txt】 y'.matchAll(marker)].map((m) => m[1] + m[2]), unit.exec('5µs')[1], /😀/.test('😀')];",
    ].join('\n');
    const ascii = asciiText(source);
    expect(isAscii(Buffer.from(ascii))).toBe(true);
    // Every line keeps its length in a comment (one `?` a character), so the source map's columns hold.
    expect(ascii.split('\n')[0]).toBe('/** Each citation (`?4:0?source?`?) */');
    const run = (text: string) => {
      const module = { exports: [] as unknown };
      new Function('module', text)(module);
      return module.exports;
    };
    expect(run(ascii)).toEqual(run(source));
    expect(run(ascii)).toEqual([['40'], 'µs', true]);
    expect(() => asciiText('const s = String.raw`café`;')).toThrow(
      /non-ASCII character outside a comment, regular expression or string, line 1/,
    );
  });

  it("reads the tokenizer's ranks and character classes from the build's files, gpt-tokenizer's own ranks left unloaded (src/core/vocabulary.ts, pretokens.ts)", async () => {
    ensureBuilt();
    const ranks = (await import('gpt-tokenizer/bpeRanks/o200k_base')).default;
    const { decodeVocabulary, encodeVocabulary, vocabularyOfRanks } = await import('../../src/core/vocabulary.js');
    const file = readFileSync(join(root, 'dist/o200k.bin'));
    expect(Buffer.from(encodeVocabulary(vocabularyOfRanks(ranks))).equals(file)).toBe(true);
    expect(decodeVocabulary(file).count).toBe(ranks.length);
    const { classTable } = await import('../../src/core/pretokens.js');
    expect(Buffer.from(classTable()).equals(readFileSync(join(root, 'dist/classes.bin')))).toBe(true);
    // A started server warms its tokenizer: the hook reports which files it reads and which packages it loads.
    const dir = mkdtempSync(join(tmpdir(), 'standin-ranks-'));
    const hook = join(dir, 'hook.cjs');
    writeFileSync(
      hook,
      `const fs = require('node:fs'); const Module = require('node:module');
       const read = fs.readFileSync;
       const note = (p) => { if (/(o200k|classes)\\.bin$/.test(String(p))) process.stderr.write('READ ' + String(p).split('/').pop() + '\\n'); };
       fs.readFileSync = function (p, ...rest) { note(p); return read.call(this, p, ...rest); };
       const readAsync = fs.promises.readFile;
       fs.promises.readFile = function (p, ...rest) { note(p); return readAsync.call(this, p, ...rest); };
       const load = Module._load;
       Module._load = function (request, ...rest) { if (request.startsWith('gpt-tokenizer')) process.stderr.write('LOAD ' + request + '\\n'); return load.call(this, request, ...rest); };`,
    );
    const child = spawn(process.execPath, ['--require', hook, 'dist/main.js', 'serve', '--port', '0'], {
      cwd: root,
      env: { ...process.env, STANDIN_DATA: join(dir, 'data') },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    try {
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (d: Buffer) => {
          err += d.toString();
          if (err.includes('READ o200k.bin') && err.includes('READ classes.bin')) setTimeout(resolve, 200);
        });
        child.on('exit', (code) => reject(new Error(`exited with ${code}: ${err}`)));
      });
      expect(err).not.toContain('LOAD gpt-tokenizer');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.on('close', r));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("validates requests with the build's validators, never compiling one, and refuses bad ones as the sources do (src/core/validation.ts)", async () => {
    ensureBuilt();
    const written = readdirSync(join(root, 'dist/validators'));
    expect(written.length).toBeGreaterThan(100);
    expect(written.filter((f) => !/^[0-9a-f]{32}\.cjs$/.test(f))).toEqual([]);
    // The hook reports each validator file the server loads, and each validator ajv compiles (its code, made
    // with `new Function`, names `vErrors`).
    const dir = mkdtempSync(join(tmpdir(), 'standin-validators-'));
    const hook = join(dir, 'hook.cjs');
    writeFileSync(
      hook,
      `const Module = require('node:module');
       const load = Module._load;
       Module._load = function (request, ...rest) { if (request.includes('/validators/')) process.stderr.write('VALIDATOR\\n'); return load.call(this, request, ...rest); };
       const report = (args) => { if (String(args.at(-1)).includes('vErrors')) process.stderr.write('COMPILED\\n'); };
       globalThis.Function = new Proxy(Function, {
         construct: (target, args) => (report(args), Reflect.construct(target, args)),
         apply: (target, self, args) => (report(args), Reflect.apply(target, self, args)),
       });`,
    );
    const ADMIN = 'sk-admin-validators-test-0000000000000000';
    const KEY = 'sk-proj-validators-test-00000000000000000';
    const port = await freePort();
    const built = await serve({
      NODE_OPTIONS: `--require ${hook}`,
      STANDIN_PORT: String(port),
      STANDIN_DATA: join(dir, 'data'),
      STANDIN_ADMIN_KEY: ADMIN,
    });
    const call = caller(() => `http://127.0.0.1:${port}`, KEY);
    let err = '';
    built.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const source = await startTestStandin();
    try {
      expect(
        (await call('/admin/v1/projects/proj_demo/api_keys', { method: 'POST', key: ADMIN, body: { name: 't', value: KEY } })).status,
      ).toBe(201);
      // Bodies, query strings and path parameters, refused and taken.
      const requests: [string, string, unknown][] = [
        ['POST', '/v1/vector_stores', { name: 5 }],
        ['POST', '/v1/vector_stores', { name: 'kept', metadata: { a: 'b' } }],
        ['POST', '/v1/chat/completions', { model: 'gpt-4o-mini' }],
        ['POST', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], n: 'two' }],
        ['POST', '/v1/responses', { model: 'gpt-4o-mini', input: 'hi', temperature: 'hot' }],
        ['POST', '/v1/assistants', { model: 'gpt-4o-mini', tools: [{ type: 'no_such_tool' }] }],
        ['GET', '/v1/files?limit=abc', undefined],
        ['GET', '/v1/files?limit=0x10', undefined],
        ['GET', '/v1/vector_stores?order=sideways', undefined],
      ];
      for (const [method, path, body] of requests) {
        const fromBuild = await call(path, { method, body });
        const fromSources = await source.req(method, path, { key: 'platform', body });
        const strip = (b: any) => (b?.object === 'vector_store' ? { ...b, id: '', created_at: 0, last_active_at: 0 } : b);
        expect({ status: fromBuild.status, body: strip(fromBuild.body) }, `${method} ${path}`).toEqual({
          status: fromSources.status,
          body: strip(fromSources.body),
        });
      }
      expect(err.match(/VALIDATOR/g)?.length ?? 0).toBeGreaterThanOrEqual(6);
      expect(err).not.toContain('COMPILED');
    } finally {
      await source.close();
      built.kill('SIGTERM');
      await new Promise((r) => built.on('close', r));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("starts from the build's code cache: the instance says so as it listens (src/core/code-cache.ts)", async () => {
    ensureBuilt();
    const data = mkdtempSync(join(tmpdir(), 'standin-code-cache-'));
    const child = spawn(process.execPath, ['dist/main.js', 'serve', '--port', '0'], {
      cwd: root,
      env: { ...process.env, STANDIN_DATA: data },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    try {
      const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const line = out.split('\n').find((l) => l.includes('"event":"instance.listening"'));
          if (line) resolve(JSON.parse(line) as Record<string, unknown>);
        });
        child.on('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
      });
      expect(listening.code_cache, out).toBe('used');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.on('close', r));
      rmSync(data, { recursive: true, force: true });
    }
  });
});
