import { describe, expect, it } from 'vitest';
import { logWorkTakenOver, readinessLog } from './instance-events.js';
import type { Logger } from './module.js';

function recorder() {
  const lines: { level: string; obj: Record<string, unknown>; msg?: string }[] = [];
  const at =
    (level: string) =>
    (obj: unknown, msg?: string): void =>
      void lines.push({ level, obj: obj as Record<string, unknown>, msg });
  const log: Logger = { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
  return { log, lines, events: () => lines.map((l) => l.obj.event) };
}

describe('readiness changes as events', () => {
  const ok = [
    { name: 'shutdown', ok: true },
    { name: 'store', ok: true },
    { name: 'ratelimit', ok: true },
  ];

  it('logs the first state, then only what changed', () => {
    const { log, lines, events } = recorder();
    const r = readinessLog(log);
    r.report(ok);
    r.report(ok);
    expect(events()).toEqual(['instance.ready']);

    r.report([ok[0], { name: 'store', ok: false, reason: 'postgres unreachable: timeout' }, ok[2]]);
    r.report([ok[0], { name: 'store', ok: false, reason: 'postgres unreachable: timeout' }, ok[2]]);
    expect(events()).toEqual(['instance.ready', 'store.unreachable', 'instance.not_ready']);
    expect(lines[1]).toMatchObject({ level: 'error', obj: { reason: 'postgres unreachable: timeout' } });
    expect(lines[2].obj.reasons).toEqual(['store: postgres unreachable: timeout']);

    r.report([ok[0], ok[1], { name: 'ratelimit', ok: false, reason: 'Redis unreachable for 3 s' }]);
    r.report(ok);
    expect(events().slice(3)).toEqual(['store.reachable', 'backend.down', 'backend.up', 'instance.ready']);
  });

  it('starts not ready with the reasons when a check fails from the first', () => {
    const { log, lines } = recorder();
    readinessLog(log).report([ok[0], { name: 'store', ok: false, reason: 'sqlite unreachable: disk I/O error' }]);
    expect(lines.map((l) => l.obj.event)).toEqual(['store.unreachable', 'instance.not_ready']);
  });
});

describe('work.taken_over', () => {
  it('is one info line with the kind and id of the work', () => {
    const { log, lines } = recorder();
    logWorkTakenOver(log, { kind: 'run', id: 'run_1', lapsed_ms: 1200 });
    expect(lines).toEqual([
      {
        level: 'info',
        obj: { event: 'work.taken_over', kind: 'run', id: 'run_1', lapsed_ms: 1200 },
        msg: 'took over run run_1 from a lost instance',
      },
    ]);
  });
});
