import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { modules } from '../../src/server/modules.js';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { probeModule } from './probe.js';

const url = process.env.STANDIN_TEST_REDIS_URL;
const all = [...modules, probeModule];
const running: TestStandin[] = [];
afterAll(async () => {
  for (const s of running) await s.close();
});

describe.runIf(url)('two Standin instances on one Redis', () => {
  it('never exceed a limit together, and report one shared count', async () => {
    // A model name of this run's own keeps parallel runs on the same Redis apart.
    const model = `m-${randomUUID()}`;
    const config = {
      rate_limits: {
        replace_defaults: true,
        ramp: { enabled: false },
        models: { [model]: { tiers: { tier_1: { rpd: 50, tpd: 1_000_000 } } } },
      },
    };
    for (let i = 0; i < 2; i++) {
      const s = await startTestStandin({ modules: all, settings: { redisUrl: url } });
      running.push(s);
      await applyConfig(s.ctx, all, config);
      expect((s.ctx.services.ratelimit as any).backend.name).toBe('redis');
    }
    const [a, b] = running;
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).req('POST', '/v1/probe', { key: 'platform', body: { model, max_tokens: 10 } })),
    );
    expect(results.filter((r) => r.status === 200).length).toBe(50);
    expect(results.filter((r) => r.status === 429).length).toBe(150);
    const remaining = results.filter((r) => r.status === 200).map((r) => Number(r.headers['x-ratelimit-remaining-requests']));
    // Each admitted request saw a distinct place in the one shared count.
    expect(new Set(remaining).size).toBe(50);
    expect(Math.min(...remaining)).toBe(0);
    expect(Math.max(...remaining)).toBe(49);
  });
});
