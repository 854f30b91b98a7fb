import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { until } from '../fleet/instances.js';
import { startReceiver } from '../webhooks/receiver.js';

/**
 * Moving the Standin clock is what tests do; a claim on a job is held in real time. A delivery in flight
 * when the clock moves an hour ahead is not claimed and sent again.
 */
describe.each(dialects())('claims and the moved clock (%s)', (dialect) => {
  let s: TestStandin;
  let slow: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { workers: true } });
    await s.listen();
    slow = await startReceiver(() => ({ status: 200, delayMs: 1_500 }));
  });
  afterAll(async () => {
    await slow?.close();
    await s?.close();
  });

  it('sends a delivery in flight once when the clock moves past its claim', { timeout: 30_000 }, async () => {
    const admin = (method: string, path: string, body?: unknown) => s.req(method, `/admin/v1${path}`, { key: 'admin', body });
    await admin('POST', '/projects/proj_demo/webhook_endpoints', { name: 'slow', url: slow.url, event_types: ['batch.completed'] });
    await admin('POST', '/projects/proj_demo/events', { type: 'batch.completed' });
    await until(async () => slow.received.length >= 1, 10_000);
    expect((await admin('POST', '/clock/advance', { duration: '1h' })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(slow.received.length).toBe(1);
  });
});
