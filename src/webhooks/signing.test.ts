import { Webhook } from 'standardwebhooks';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { isWebhookSecret, newWebhookSecret, sign, signatureHeader } from './signing.js';
import { createClock } from '../core/clock.js';
import { nextAttemptAt, retryDelayMs, RETRY_WINDOW_MS } from './backoff.js';

const wall = createClock();

describe('signing', () => {
  it('makes whsec_ secrets of 24 to 64 bytes', () => {
    const s = newWebhookSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(32);
    expect(isWebhookSecret(newWebhookSecret(24))).toBe(true);
    expect(isWebhookSecret(newWebhookSecret(64))).toBe(true);
    expect(() => newWebhookSecret(16)).toThrow();
    expect(isWebhookSecret('whsec_' + Buffer.alloc(8).toString('base64'))).toBe(false);
    expect(isWebhookSecret('sk_abc')).toBe(false);
  });

  it('matches the standardwebhooks reference signer', () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({
      id: 'evt_1',
      object: 'event',
      type: 'batch.completed',
      created_at: 1,
      data: { id: 'batch_1' },
      note: 'ünïcode',
    });
    const ts = wall.nowSeconds(); // receivers check the timestamp against their wall clock
    expect(sign(secret, 'evt_1', ts, body)).toBe(new Webhook(secret).sign('evt_1', new Date(ts * 1000), body));
  });

  it('verifies with standardwebhooks and the openai SDK, with one or two secrets', async () => {
    const oldSecret = newWebhookSecret();
    const newSecret = newWebhookSecret(48);
    const body = JSON.stringify({ id: 'evt_2', object: 'event', type: 'response.completed', created_at: 2, data: { id: 'resp_1' } });
    const ts = wall.nowSeconds(); // receivers check the timestamp against their wall clock
    const headers = {
      'webhook-id': 'evt_2',
      'webhook-timestamp': String(ts),
      'webhook-signature': signatureHeader([newSecret, oldSecret], 'evt_2', ts, body),
    };
    const client = new OpenAI({ apiKey: 'x' });
    for (const secret of [oldSecret, newSecret]) {
      expect(new Webhook(secret).verify(body, headers)).toMatchObject({ id: 'evt_2' });
      await expect(client.webhooks.unwrap(body, headers, secret)).resolves.toMatchObject({ type: 'response.completed' });
    }
    const other = newWebhookSecret();
    expect(() => new Webhook(other).verify(body, headers)).toThrow();
    await expect(client.webhooks.unwrap(body, headers, other)).rejects.toThrow(/signature/);
    expect(() => new Webhook(oldSecret).verify(body + ' ', headers)).toThrow();
  });
});

describe('backoff', () => {
  it('doubles from 5 s to a 1 h cap, with ±20 % jitter', () => {
    expect(retryDelayMs(1, () => 0.5)).toBe(5_000);
    expect(retryDelayMs(2, () => 0.5)).toBe(10_000);
    expect(retryDelayMs(5, () => 0.5)).toBe(80_000);
    expect(retryDelayMs(40, () => 0.5)).toBe(3_600_000);
    expect(retryDelayMs(1, () => 0)).toBe(4_000);
    expect(retryDelayMs(1, () => 1)).toBe(6_000);
  });

  it('ends at the 72-hour window, with a last attempt at its end', () => {
    const start = 1_000_000;
    let now = start;
    let failures = 0;
    const times: number[] = [];
    for (;;) {
      failures++;
      const next = nextAttemptAt(start, now, failures, () => 0.5);
      if (next === null) break;
      times.push(next);
      now = next;
    }
    expect(times.at(-1)).toBe(start + RETRY_WINDOW_MS);
    expect(times.length).toBeGreaterThan(70);
    expect(times.length).toBeLessThan(90);
    expect(nextAttemptAt(start, start + RETRY_WINDOW_MS, 3)).toBeNull();
  });
});
