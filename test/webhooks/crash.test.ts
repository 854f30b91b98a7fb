import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers.js';
import { ensureBuilt, freePort, freshDatabaseUrl, serve } from '../process.js';
import { startReceiver } from './receiver.js';

const ADMIN = 'sk-admin-crash-test-key-000000000000000';

describe.each(dialects())('kill -9 during a burst of events (%s)', (dialect) => {
  const dir = mkdtempSync(join(tmpdir(), 'standin-crash-'));
  let child: ChildProcess | undefined;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  const env: Record<string, string> = {
    STANDIN_DATA: dir,
    STANDIN_ADMIN_KEY: ADMIN,
    STANDIN_LOG_LEVEL: 'error',
    STANDIN_WEBHOOK_TIMEOUT_MS: '2000',
  };

  beforeAll(async () => {
    ensureBuilt();
    if (dialect === 'postgres') {
      env.STANDIN_DATABASE_URL = await freshDatabaseUrl('crash');
    }
    env.STANDIN_PORT = String(await freePort());
    // Before the kill the receiver holds its answers, so every delivery it got is still in flight.
    rx = await startReceiver(() => ({ status: 200, body: 'ok', delayMs: 60_000 }));
  }, 120_000);

  afterAll(async () => {
    child?.kill('SIGKILL');
    await rx?.close();
    rmSync(dir, { recursive: true, force: true });
    // The schema stays until the next run's global setup (a DROP now would race other test processes).
  });

  it('delivers every acknowledged event at least once after a restart', async () => {
    child = await serve(env);
    const base = `http://127.0.0.1:${env.STANDIN_PORT}`;
    const admin = (path: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body ?? {}),
      });
    const ep = await admin('/admin/v1/projects/proj_demo/webhook_endpoints', {
      name: 'crash',
      url: rx.url,
      event_types: ['batch.completed'],
    });
    expect(ep.status).toBe(201);

    const acknowledged = new Set<string>();
    let killed = false;
    const burst = async () => {
      for (let i = 0; i < 60 && !killed; i++) {
        try {
          const r = await admin('/admin/v1/projects/proj_demo/events', { type: 'batch.completed' });
          if (r.status === 201) acknowledged.add(((await r.json()) as { id: string }).id);
        } catch {
          return; // the process is gone; this event was never acknowledged
        }
      }
    };
    const senders = Array.from({ length: 6 }, burst);
    for (let i = 0; i < 1000 && rx.received.length < 40; i++) await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGKILL');
    killed = true;
    await Promise.all(senders);
    const inFlight = new Set(rx.received.map((r) => r.headers['webhook-id'] as string));
    expect(inFlight.size).toBeGreaterThanOrEqual(40);
    // Usually more events were acknowledged than reached the receiver (the rest were queued when it died);
    // on a fast machine all of them may be in flight. Both kinds must arrive after the restart.

    rx.set(() => ({ status: 200, body: 'ok' }));
    child = await serve(env);
    if (dialect === 'postgres') {
      // Claims of the dead process lapse after their visibility timeout; move the Standin clock past it.
      const adv = await admin('/admin/v1/clock/advance', { seconds: 60 });
      expect(adv.status).toBe(200);
    }
    // On SQLite one process owns the queue: the restarted one takes the dead one's claims back at once,
    // well within the 32 s visibility timeout (this waits 15 s at most, in real time).
    const times = (id: string) => rx.received.filter((r) => r.headers['webhook-id'] === id).length;
    // Everything acknowledged arrives; what was cut off mid-request arrives again (same webhook-id).
    const missing = () => [...acknowledged].filter((id) => times(id) < (inFlight.has(id) ? 2 : 1));
    for (let i = 0; i < 1500 && missing().length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(missing()).toEqual([]);
    child.kill('SIGTERM');
  }, 120_000);
});
