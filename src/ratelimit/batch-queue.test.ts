import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { batchQueueTokens } from './store.js';

/** Rule 4: holds are exact under concurrent creates (each in its own transaction), and releases free them. */
describe.each(dialects())('batch queue (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
    const rl = s.ctx.services.ratelimit;
    const config = rl.config();
    rl.setConfig({ ...config, organizations: { org_q: { models: { 'model-q': { batch_queue_tokens: 55 } } } } });
  });
  afterAll(() => s?.close());

  it('admits exactly what fits of 20 concurrent holds, and frees on release', async () => {
    const q = s.ctx.services.batchQueue;
    const attempts = await Promise.allSettled(
      Array.from({ length: 20 }, () => s.ctx.store.db.transaction().execute((tx) => q.hold(tx, 'org_q', 'model-q', 10))),
    );
    const held = attempts.filter((a) => a.status === 'fulfilled');
    expect(held.length).toBe(5);
    for (const a of attempts)
      if (a.status === 'rejected')
        expect(a.reason).toMatchObject({ status: 429, code: 'token_limit_exceeded', headers: { 'x-should-retry': 'false' } });
    expect(await batchQueueTokens(s.ctx.store.db, 'org_q', 'model-q')).toBe(50);
    const hold = (held[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof q.hold>>>).value;
    await q.release(s.ctx.store.db, hold);
    expect(await batchQueueTokens(s.ctx.store.db, 'org_q', 'model-q')).toBe(40);
    await expect(q.hold(s.ctx.store.db, 'org_q', 'model-q', 20)).rejects.toMatchObject({ code: 'token_limit_exceeded' });
    await q.hold(s.ctx.store.db, 'org_q', 'model-q', 10);
    // Another model is counted under its own key (and the tier's limit).
    await q.hold(s.ctx.store.db, 'org_q', 'other-model', 1000);
    expect(await batchQueueTokens(s.ctx.store.db, 'org_q', 'other-model')).toBe(1000);
  });
});
