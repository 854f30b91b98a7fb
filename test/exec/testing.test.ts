// `import { start } from 'standin/testing'` in a user's project: the examples of examples/testing run
// there under vitest, jest and node:test, in both module formats, against the packed package.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dialects } from '../helpers.js';
import { userProject, type UserProject } from './project.js';

// Each test starts processes of a user's project (npx, node, vitest, tsc): seconds each on a busy machine.
vi.setConfig({ testTimeout: 180_000 });

let project: UserProject;
beforeAll(() => {
  project = userProject();
}, 120_000);
afterAll(() => project?.remove());

describe('standin/testing', () => {
  it('the vitest example passes', async () => {
    const { code, out } = await project.run('npx', ['vitest', 'run']);
    expect(out).toMatch(/Tests\s+.*6 passed/);
    expect(code, out).toBe(0);
  });

  it('is typed: the example checks, and a wrong call does not', async () => {
    const ok = await project.run('npx', ['tsc', '-p', '.']);
    expect(ok.code, ok.out).toBe(0);
    writeFileSync(
      join(project.dir, 'vitest/wrong.ts'),
      `import { start } from 'standin/testing';\nconst s = await start();\nawait s.fault({ path: 1 });\nconst n: number = s.keys.admin;\nexport { n };\n`,
    );
    const wrong = await project.run('npx', ['tsc', '-p', '.']);
    rmSync(join(project.dir, 'vitest/wrong.ts'));
    expect(wrong.code).not.toBe(0);
    expect(wrong.out).toContain("wrong.ts(3,17): error TS2322: Type 'number' is not assignable to type 'string'");
    expect(wrong.out).toContain('wrong.ts(4,7): error TS2322');
  });

  it('the node:test example passes', async () => {
    const { code, out } = await project.run('node', ['--test', 'node-test/standin.test.mjs']);
    expect(out).toMatch(/# pass 3/);
    expect(code, out).toBe(0);
  });

  it('the jest example passes (CommonJS, as jest runs without transforms)', async () => {
    const { code, out } = await project.run('npx', ['jest']);
    expect(out).toMatch(/Tests:\s+4 passed, 4 total/);
    expect(code, out).toBe(0);
  });

  it('loads from CommonJS (jest without ESM), and stops Standin at close()', async () => {
    writeFileSync(
      join(project.dir, 'cjs.cjs'),
      `const { start } = require('standin/testing');
      (async () => {
        const s = await start();
        const res = await fetch(s.url + '/v1/models', { headers: { authorization: 'Bearer ' + s.keys.platform } });
        await s.close();
        let after = 'stopped';
        await fetch(s.url + '/healthz').then(() => (after = 'still up'), () => {});
        console.log(JSON.stringify({ status: res.status, after }));
      })();`,
    );
    const { code, out } = await project.run('node', ['cjs.cjs']);
    expect(code, out).toBe(0);
    expect(out).toContain('{"status":200,"after":"stopped"}');
  });

  it('snapshot() writes the state to a file, restore() loads it back, and start({ import }) starts from it', async () => {
    writeFileSync(
      join(project.dir, 'snap.mjs'),
      `import OpenAI from 'openai';
      import { existsSync, statSync } from 'node:fs';
      import { start } from 'standin/testing';
      const named = async (client, name) => (await client.beta.assistants.list({ limit: 100 })).data.some((a) => a.name === name);
      const a = await start();
      const ca = new OpenAI({ baseURL: a.url + '/v1', apiKey: a.keys.platform, maxRetries: 0 });
      await ca.beta.assistants.create({ model: 'gpt-4o', name: 'Kept' });
      const file = await a.snapshot('kept.jsonl.gz');
      await a.reset();
      const afterReset = await named(ca, 'Kept');
      const restored = await a.restore('kept.jsonl.gz');
      const afterRestore = await named(ca, 'Kept');
      const missing = await a.restore('no-such.jsonl.gz').then(() => 'restored', (e) => e.message);
      await a.close();

      const b = await start({ import: 'kept.jsonl.gz' });
      const cb = new OpenAI({ baseURL: b.url + '/v1', apiKey: b.keys.platform, maxRetries: 0 });
      const old = new OpenAI({ baseURL: b.url + '/v1', apiKey: a.keys.platform, maxRetries: 0 });
      const imported = [await named(cb, 'Kept'), await named(old, 'Kept')];
      await cb.beta.assistants.create({ model: 'gpt-4o', name: 'Later' });
      await b.reset();
      const resetToFixture = [await named(cb, 'Kept'), await named(cb, 'Later')];
      await b.close();
      console.log(JSON.stringify({
        file: file.path === 'kept.jsonl.gz' && file.size === statSync('kept.jsonl.gz').size && !existsSync('kept.jsonl.gz.part'),
        afterReset, object: restored.object, rows: restored.rows > 0, afterRestore, missing, imported, resetToFixture,
      }));`,
    );
    const { code, out } = await project.run('node', ['snap.mjs']);
    expect(code, out).toBe(0);
    expect(JSON.parse(out.split('\n').findLast((l) => l.startsWith('{'))!)).toEqual({
      file: true,
      afterReset: false,
      object: 'snapshot.restored',
      rows: true,
      afterRestore: true,
      missing: 'standin/testing: restore: no such file no-such.jsonl.gz',
      imported: [true, true],
      resetToFixture: [true, false],
    });
  });

  it('stops Standin when the test process goes away without close()', async () => {
    writeFileSync(
      join(project.dir, 'forgot.mjs'),
      `import { start } from 'standin/testing';
      const s = await start();
      console.log(s.url);`,
    );
    const { code, out } = await project.run('node', ['forgot.mjs']);
    expect(code, out).toBe(0);
    const url = out.trim().split('\n').pop()!;
    // Standin notices its parent is gone (its stdin closes) and stops: the port stops answering.
    let up = true;
    for (let i = 0; i < 100 && up; i++) {
      up = await fetch(`${url}/healthz`).then(
        () => true,
        () => false,
      );
      if (up) await new Promise((r) => setTimeout(r, 100));
    }
    expect(up).toBe(false);
  });

  it('refuses a bad start with the reason, not a hang', async () => {
    writeFileSync(
      join(project.dir, 'bad.mjs'),
      `import { start } from 'standin/testing';
      await start({ config: 'no-such-file.yaml' }).then(() => console.log('started'), (err) => console.log('refused:', err.message));`,
    );
    const { out } = await project.run('node', ['bad.mjs']);
    expect(out).toContain('no-such-file.yaml');
    expect(out).toContain('refused: standin/testing: Standin exited before it was ready');
  });
});

describe.each(dialects().filter((d) => d === 'postgres'))('standin/testing on %s', () => {
  it('keeps the state in a new schema of the database', async () => {
    writeFileSync(
      join(project.dir, 'pg.mjs'),
      `import { start } from 'standin/testing';
      const s = await start({ databaseUrl: process.env.DB });
      const res = await fetch(s.url + '/admin/v1/clock', { headers: { authorization: 'Bearer ' + s.keys.admin } });
      await s.close();
      console.log('status', res.status);`,
    );
    const { code, out } = await project.run('node', ['pg.mjs'], { env: { DB: process.env.STANDIN_TEST_DATABASE_URL! } });
    expect(code, out).toBe(0);
    expect(out).toContain('status 200');
  });
});
