import { describe, expect, it } from 'vitest';
import { RunBus } from './bus.js';

describe('RunBus', () => {
  it('wakes a waiter on a notification of its run only', async () => {
    const bus = new RunBus();
    const w = bus.waiter('run_a', 60_000);
    let woke = false;
    void w.promise.then(() => (woke = true));
    bus.notify('run_b');
    await new Promise((r) => setImmediate(r));
    expect(woke).toBe(false);
    bus.notify('run_a');
    await w.promise;
    expect(woke).toBe(true);
  });

  it('resolves on its timer and on abort, and leaves no listener behind', async () => {
    const bus = new RunBus();
    await bus.waiter('run_a', 5).promise;
    const ac = new AbortController();
    const w = bus.waiter('run_a', 60_000, ac.signal);
    ac.abort();
    await w.promise;
    let calls = 0;
    const off = bus.on('run_a', () => calls++);
    bus.notify('run_a');
    off();
    bus.notify('run_a');
    expect(calls).toBe(1);
    expect((bus as any).emitter.listenerCount('run_a')).toBe(0);
  });
});
