import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globMatch, pathMatcher } from '../../src/ratelimit/faults.js';
import { startTestStandin, type TestStandin } from '../helpers.js';

/**
 * Work done before a key is checked is bounded: a fault's glob is matched one path character at a time
 * (never by backtracking), so a no-key request with a path of slashes costs at most (pattern + 1) steps per
 * character. What an operator sets is bounded as the docs say, and a refusal names the field, the value
 * given and the rule.
 */

const tokensOf = (pattern: string) => [...pattern].map((c) => c.charCodeAt(0));

describe('fault globs match in linear time', () => {
  it('a path of 100,000 slashes against four ** takes at most (pattern + 1) steps a character', () => {
    // The backtracking matcher took 22 s for 600 slashes and four `**`; this would not finish in the test's time.
    const pattern = '/**/**/**/**/x';
    const path = '/'.repeat(100_000);
    const match = pathMatcher(pattern);
    expect(match(path)).toBe(false);
    expect(match(`${path}x`)).toBe(true);
    const steps = { n: 0 };
    globMatch(
      tokensOf(pattern).map((c) => (c === 42 ? -2 : c)),
      path,
      steps,
    );
    expect(steps.n).toBeLessThanOrEqual(path.length * (pattern.length + 1));
  });

  it.each([
    ['/v1/threads/*/runs', '/v1/threads/thread_1/runs', true],
    ['/v1/threads/*/runs', '/v1/threads/a/b/runs', false],
    ['/v1/**/runs', '/v1/threads/a/b/runs', true],
    ['/v1/**', '/v1/', true],
    ['/v1/*', '/v1/', true],
    ['/v1/*x', '/v1/a/x', false],
    ['/**/**/**/**/x', '/x', false],
    ['/**/**/**/**/x', '/////x', true],
    ['/v1/mod***', '/v1/models/a', true],
    ['/v1/models', '/v1/models/gpt', true],
  ])('%s ~ %s: %s', (pattern, path, want) => expect(pathMatcher(pattern)(path)).toBe(want));
});

describe('bounds and messages of the control plane', () => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin();
  });
  afterAll(async () => s?.close());

  it('a no-key request with thousands of slashes under faults of several ** answers its 401', async () => {
    for (const path of ['/**/**/**/**/x', '/v1/**/**/**/**/**/**/z'])
      expect((await s.req('POST', '/admin/v1/faults', { key: 'admin', body: { path, status: 503 } })).status).toBe(201);
    const r = await s.req('GET', `/v1/${'/'.repeat(8000)}`);
    expect(r.status).toBe(401);
    await s.req('DELETE', '/admin/v1/faults', { key: 'admin' });
  });

  it('a fault refused names the field, the value given and the rule', async () => {
    const fault = (body: object) => s.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: '/v1/models', ...body } });
    const teapot = await fault({ status: 418 });
    expect(teapot.status).toBe(400);
    expect(teapot.body.error).toMatchObject({ param: 'status', code: 'invalid_value' });
    expect(teapot.body.error.message).toBe("Invalid value for 'status': 418. Supported values are: '429', '503', '500'.");
    const text = await fault({ status: '429' });
    expect(text.body.error.message).toBe("Invalid type for 'status': expected a number, but got a string instead.");
    const count = await fault({ count: 'many' });
    expect(count.body.error.message).not.toContain('undefined');
    expect(count.body.error.message).toContain('a string');
    const type = await fault({ type: 'teapot_error' });
    expect(type.body.error.message).toContain('"teapot_error"');
    expect(type.body.error.message).toContain("'rate_limit_error'");
  });

  it('batch_pace is at most 100 years, as a 400 naming the stage', async () => {
    const path = '/admin/v1/projects/proj_demo/work_holds';
    const huge = await s.req('PUT', path, { key: 'admin', body: { batch_pace: { finalizing: `${'9'.repeat(38)}d` } } });
    expect(huge.status).toBe(400);
    expect(huge.body.error).toMatchObject({ param: 'batch_pace.finalizing', code: 'invalid_value' });
    expect(huge.body.error.message).toContain(`'${'9'.repeat(38)}d'`);
    expect((await s.req('PUT', path, { key: 'admin', body: { batch_pace: { in_progress: '36501d' } } })).status).toBe(400);
    expect((await s.req('GET', path, { key: 'admin' })).body.batch_pace).toEqual({});
    expect((await s.req('PUT', path, { key: 'admin', body: { batch_pace: { in_progress: '36500d' } } })).status).toBe(200);
    await s.req('DELETE', path, { key: 'admin' });
  });
});
