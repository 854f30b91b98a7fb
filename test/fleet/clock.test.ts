import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../process.js';
import { startInstances, until, type Instance } from './instances.js';

/**
 * The shared clock rides the change signal: a move on A is B's time as soon as the NOTIFY arrives, not at
 * B's next poll of the store (it used to poll once a second; the signal's own poll is the fallback now).
 */
const databaseUrl = process.env.STANDIN_TEST_DATABASE_URL;

describe.runIf(databaseUrl)('the clock of two instances on one PostgreSQL database', () => {
  let fleet: Awaited<ReturnType<typeof startInstances>>;
  let a: Instance;
  let b: Instance;
  const offset = async (i: Instance) => (await i.call('GET', '/admin/v1/clock')).body.offset_ms as number;

  beforeAll(async () => {
    ensureBuilt();
    fleet = await startInstances('fleet_clock');
    [a, b] = fleet.instances;
  }, 120_000);
  afterAll(async () => {
    await fleet?.close();
  });

  it('an advance on A is the time on B within moments, every time', async () => {
    const took: number[] = [];
    for (let n = 1; n <= 5; n++) {
      const moved = await a.call('POST', '/admin/v1/clock/advance', { seconds: 3600 });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
      const target = moved.body.offset_ms as number;
      took.push(await until(async () => (await offset(b)) >= target, 2_000));
      expect(await offset(b)).toBe(target);
    }
    took.sort((x, y) => x - y);
    // NOTIFY brings it in a few ms; the one-second poll this replaces took half a second on average.
    expect(took[2], `ms until B followed: ${took.join(', ')}`).toBeLessThan(300);
  });

  it('a reset of the clock on A takes B back too', async () => {
    expect(await offset(b)).toBeGreaterThan(0);
    const reset = await a.call('POST', '/admin/v1/reset', { clock: true });
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    await until(async () => (await offset(b)) === 0, 2_000);
    expect(await offset(a)).toBe(0);
  });
});
