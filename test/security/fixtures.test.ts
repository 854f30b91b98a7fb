import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { startChatServer, type ChatServer } from '../assistants/chat-server.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';

/**
 * Replay fixtures are outside input (issue 34): a fixture file may have been edited by anyone, so what it
 * holds is checked before it reaches a counter or a reply, its size and depth are bounded, it is read once,
 * a miss tells the caller nothing of other recordings, and a config sent to the control plane cannot point
 * `fixtures` or `api_key_env` anywhere it likes.
 */
const LIMIT = 1024 * 1024;

describe.each(dialects())('replay fixtures are untrusted input (%s)', (dialect) => {
  let s: TestStandin;
  let chat: ChatServer;
  let root: string;
  let dir: string;
  const logged: { level: string; line: string }[] = [];
  const ask = (content: string) =>
    s.req('POST', '/v1/chat/completions', {
      key: 'platform',
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] },
    });
  /** The fixture file recorded for a prompt. */
  const fileOf = (content: string) =>
    readdirSync(dir).find((f) => f.endsWith('.json') && readFileSync(join(dir, f), 'utf8').includes(`"${content}"`))!;
  const edit = (content: string, change: (fixture: any) => void) => {
    const path = join(dir, fileOf(content));
    const fixture = JSON.parse(readFileSync(path, 'utf8'));
    change(fixture);
    writeFileSync(path, JSON.stringify(fixture));
  };

  beforeAll(async () => {
    chat = await startChatServer();
    root = mkdtempSync(join(tmpdir(), 'standin-sec-fixtures-'));
    dir = join(root, 'fx');
    s = await startTestStandin({ dialect, settings: { fixturesRoot: root, fixtureMaxBytes: LIMIT } });
    for (const level of ['error', 'warn'] as const)
      s.ctx.log[level] = (obj: unknown, msg?: string) => void logged.push({ level, line: `${msg ?? ''} ${JSON.stringify(obj)}` });
    await applyConfig(s.ctx, s.modules, { models: { '*': { provider: 'record', base_url: chat.url, fixtures: dir } } });
    for (const prompt of ['nan tokens', 'good one', 'too big', 'too deep', 'read once', 'other organization secret plan'])
      expect((await ask(prompt)).status).toBe(200);
    await applyConfig(s.ctx, s.modules, { models: { '*': { provider: 'replay', fixtures: dir } } });
  });
  // Each test on fresh counters, so one test's finding cannot decide another's.
  afterEach(() => s.ctx.services.ratelimit.reset());
  afterAll(async () => {
    await s?.close();
    await chat?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a usage count that is not a number is refused, naming the file and the rule; the rate limiter stays sound', async () => {
    edit('nan tokens', (f) => (f.result.usage.prompt_tokens = 'x'));
    const bad = await ask('nan tokens');
    expect(bad.status).toBe(502);
    expect(bad.body.error.message).toBe(
      `The fixture fx/${fileOf('nan tokens')} is refused: result.usage.prompt_tokens: must be a non-negative integer (got "x").`,
    );
    for (let i = 0; i < 3; i++) {
      const good = await ask('good one');
      expect(good.status).toBe(200);
      expect(good.headers['x-ratelimit-remaining-tokens']).toMatch(/^\d+$/);
      expect(good.body.usage.prompt_tokens).toBe(11);
    }
  });

  it('negative, fractional and huge counts are refused too', async () => {
    for (const value of [-5, 1.5, 1e300]) {
      edit('nan tokens', (f) => (f.result.usage.prompt_tokens = value));
      const bad = await ask('nan tokens');
      expect(bad.status).toBe(502);
      expect(bad.body.error.message).toContain('result.usage.prompt_tokens: must be a non-negative integer');
    }
  });

  it('a file over the size limit is refused by its size, before it is read', async () => {
    const path = join(dir, fileOf('too big'));
    // Sparse: one byte over the limit, all zeros; were it read and parsed, it would be "not JSON".
    truncateSync(path, LIMIT + 1);
    const res = await ask('too big');
    expect(res.status).toBe(502);
    expect(res.body.error.message).toBe(
      `The fixture fx/${path.slice(dir.length + 1)} is refused: it is ${LIMIT + 1} bytes, over the limit of ${LIMIT} (--fixture-max-bytes).`,
    );
  });

  it('a deeply nested file is a clear error, never a 500, and is logged once however many misses list it', async () => {
    const name = fileOf('too deep');
    const path = join(dir, name);
    const original = JSON.parse(readFileSync(path, 'utf8'));
    const depth = 100_000;
    writeFileSync(path, JSON.stringify({ ...original, request: '@' }).replace('"@"', `${'['.repeat(depth)}${']'.repeat(depth)}`));
    const res = await ask('too deep');
    expect(res.status).toBe(502);
    expect(res.body.error.message).toBe(`The fixture fx/${name} is refused: it nests deeper than 66 levels.`);
    // Another file nested as deep, in the folder a miss compares with.
    writeFileSync(join(dir, 'gpt-4o-mini-ffffffffffffffff.json'), `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
    for (let i = 0; i < 3; i++) expect((await ask(`never recorded ${i}`)).status).toBe(400);
    expect(logged.filter((l) => l.level === 'error' && l.line.includes('gpt-4o-mini-ffffffffffffffff.json'))).toHaveLength(1);
    expect(logged.filter((l) => l.level === 'error' && l.line.includes(name))).toHaveLength(1);
  });

  it('a file is read once: changed bytes with the same size and time are not seen, a new time is', async () => {
    const path = join(dir, fileOf('read once'));
    // Whole seconds, so the time set again after the edit is the same to the nanosecond.
    const time = Math.floor(statSync(path).mtimeMs / 1000) - 60;
    utimesSync(path, time, time);
    expect((await ask('read once')).body.choices[0].message.content).toBe('Upstream says: read once');
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.replace('Upstream says: read once', 'Upstream SAYS: read once'));
    utimesSync(path, time, time);
    expect((await ask('read once')).body.choices[0].message.content).toBe('Upstream says: read once');
    utimesSync(path, time, time + 5);
    expect((await ask('read once')).body.choices[0].message.content).toBe('Upstream SAYS: read once');
  });

  it("a miss names neither another caller's recorded prompt nor the server's folder", async () => {
    const res = await ask('other organization secret plot');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_prompt' });
    expect(res.body.error.message).toMatch(
      /^Replay miss: no recorded exchange for this request \(model 'gpt-4o-mini', key [0-9a-f]{16}\)\./,
    );
    expect(res.body.error.message).not.toContain('secret plan');
    expect(res.body.error.message).not.toContain(root);
    // The operator still learns where it differs.
    expect(logged.at(-1)?.line).toContain('requested "other organization secret plot"');
  });

  it('a config sent to the control plane cannot put `fixtures` outside the fixtures root', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'standin-sec-outside-'));
    try {
      for (const fixtures of [outside, join(root, '..', 'elsewhere'), '/etc']) {
        const res = await s.req('POST', '/admin/v1/config', {
          key: 'admin',
          body: { models: { '*': { provider: 'record', base_url: chat.url, fixtures } } },
        });
        expect(res.status, fixtures).toBe(400);
        expect(res.body.error.message).toContain('is outside the fixtures root');
      }
      // Nor through a link inside the root that leads out of it.
      mkdirSync(join(root, 'links'), { recursive: true });
      const { symlinkSync } = await import('node:fs');
      symlinkSync(outside, join(root, 'links', 'out'));
      const linked = await s.req('POST', '/admin/v1/config', {
        key: 'admin',
        body: { models: { '*': { provider: 'replay', fixtures: join(root, 'links', 'out', 'fx') } } },
      });
      expect(linked.status).toBe(400);
      expect(readdirSync(outside)).toEqual([]);
      const inside = await s.req('POST', '/admin/v1/config', {
        key: 'admin',
        body: { models: { '*': { provider: 'replay', fixtures: dir } } },
      });
      expect(inside.status).toBe(200);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('a config sent to the control plane names no other file of the server (code_interpreter packages and lock)', async () => {
    for (const code_interpreter of [
      { executor: 'pyodide', packages: '/etc' },
      { executor: 'pyodide', packages: 'file:///etc/' },
      { executor: 'pyodide', package_lock: '/etc/passwd' },
    ]) {
      const res = await s.req('POST', '/admin/v1/config', { key: 'admin', body: { code_interpreter } });
      expect(res.status, JSON.stringify(code_interpreter)).toBe(400);
      expect(res.body.error.message).toMatch(/code_interpreter\.package(s|_lock): .*is read only from the config file Standin starts with/);
      expect(res.body.error.message).not.toContain('root:');
    }
  });

  it('api_key_env names only STANDIN_UPSTREAM_ variables (models and embeddings)', async () => {
    for (const section of [
      { models: { x: { provider: 'upstream', base_url: chat.url, api_key_env: 'HOME' } } },
      { vector_stores: { embeddings: { base_url: chat.url, model: 'e', api_key_env: 'HOME' } } },
    ]) {
      const res = await s.req('POST', '/admin/v1/config', { key: 'admin', body: section });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain("'HOME' is not an upstream key variable");
    }
    process.env.STANDIN_UPSTREAM_SEC_TEST = 'sk-upstream-from-env-0000';
    try {
      const ok = await s.req('POST', '/admin/v1/config', {
        key: 'admin',
        body: { models: { 'env-*': { provider: 'upstream', base_url: chat.url, api_key_env: 'STANDIN_UPSTREAM_SEC_TEST' } } },
      });
      expect(ok.status).toBe(200);
      const res = await s.req('POST', '/v1/chat/completions', {
        key: 'platform',
        body: { model: 'env-1', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(res.status).toBe(200);
      expect(chat.requests.at(-1).headers.authorization).toBe('Bearer sk-upstream-from-env-0000');
    } finally {
      delete process.env.STANDIN_UPSTREAM_SEC_TEST;
    }
  });
});
