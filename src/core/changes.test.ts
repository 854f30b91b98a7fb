import { afterEach, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { openStore, type Store } from '../store/db.js';
import { createChanges, POLL_MS, type Changes } from './changes.js';

const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/** Resolves once `probe` holds (checked every 10 ms), or fails after `ms`. */
async function eventually(probe: () => boolean, ms = 2_000): Promise<void> {
  const until = performance.now() + ms;
  while (!probe()) {
    if (performance.now() > until) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.each(dialects())('change signal (%s)', (dialect) => {
  let s: TestStandin | undefined;
  let other: { store: Store; changes: Changes } | undefined;
  afterEach(async () => {
    await other?.changes.stop();
    await other?.store.close();
    await s?.close();
    s = other = undefined;
  });

  /** A second connection to the same database, as another process has: its own store and its own signal. */
  async function secondInstance(t: TestStandin) {
    const store = openStore({ databaseUrl: t.ctx.settings.databaseUrl, dataDir: t.ctx.settings.data, poolSize: 2 });
    const changes = createChanges(store, quiet);
    await changes.start();
    return { store, changes };
  }

  it('runs another instance’s reload after a committed change, and none after a rollback', async () => {
    s = await startTestStandin({ dialect, seed: false });
    other = await secondInstance(s);
    const seen: string[] = [];
    other.changes.on('widgets', () => void seen.push('widgets'));
    other.changes.on('gadgets', () => void seen.push('gadgets'));

    await expect(
      s.ctx.store.db.transaction().execute(async (tx) => {
        await s!.ctx.changes.bump(tx, 'widgets');
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    await s.ctx.store.db.transaction().execute((tx) => s!.ctx.changes.bump(tx, 'gadgets'));
    await eventually(() => seen.length > 0);
    // Another poll round: still nothing of the rolled-back change.
    await new Promise((r) => setTimeout(r, POLL_MS * 2));
    expect(seen).toEqual(['gadgets']);

    await s.ctx.store.db.transaction().execute(async (tx) => {
      await s!.ctx.changes.bump(tx, 'widgets');
      await s!.ctx.changes.bump(tx, 'widgets');
    });
    await eventually(() => seen.length > 1);
    expect(seen).toEqual(['gadgets', 'widgets']);
  });

  it('check() after a commit runs this instance’s own reload before it resolves', async () => {
    s = await startTestStandin({ dialect, seed: false });
    let reloads = 0;
    s.ctx.changes.on('own', () => void reloads++);
    await s.ctx.changes.bump(s.ctx.store.db, 'own');
    await s.ctx.changes.check();
    expect(reloads).toBe(1);
    // Nothing changed since: no reload.
    await s.ctx.changes.check();
    expect(reloads).toBe(1);
  });

  it('bumpAll reloads every concern, and a reload that fails is tried again', async () => {
    s = await startTestStandin({ dialect, seed: false });
    other = await secondInstance(s);
    for (const c of ['a', 'b']) await s.ctx.changes.bump(s.ctx.store.db, c);
    await other.changes.check();
    const seen: string[] = [];
    let fail = true;
    other.changes.on('a', () => void seen.push('a'));
    other.changes.on('b', () => {
      if (fail) {
        fail = false;
        throw new Error('store hiccup');
      }
      seen.push('b');
    });
    await s.ctx.changes.bumpAll(s.ctx.store.db);
    await eventually(() => seen.includes('a') && seen.includes('b'));
    expect(seen.filter((c) => c === 'a')).toHaveLength(1);
  });

  it('stop() waits for the reload running, and none runs after it: the store can close under none', async () => {
    s = await startTestStandin({ dialect, seed: false });
    other = await secondInstance(s);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const events: string[] = [];
    other.changes.on('slow', async () => {
      events.push('reload started');
      await gate;
      // What a reload does when it ends: read the store (the clock's follower saves it too).
      await other!.store.db.selectFrom('settings').select('key').execute();
      events.push('reload ended');
    });
    await s.ctx.changes.bump(s.ctx.store.db, 'slow');
    const checking = other.changes.check();
    await eventually(() => events.length > 0);
    // Another change, whose check would queue behind the running one.
    await s.ctx.changes.bump(s.ctx.store.db, 'slow');
    void other.changes.check();
    const stopped = other.changes.stop().then(() => events.push('stopped'));
    await new Promise((r) => setTimeout(r, 50));
    expect(events).toEqual(['reload started']);
    release();
    await stopped;
    await checking;
    expect(events).toEqual(['reload started', 'reload ended', 'stopped']);
    // Stopped: a check runs no reload, the change after stop() included.
    await other.changes.check();
    await new Promise((r) => setTimeout(r, POLL_MS * 2));
    expect(events).toEqual(['reload started', 'reload ended', 'stopped']);
  });
});
