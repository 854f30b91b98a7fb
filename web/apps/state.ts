// Page-wide state: the connection, the status line, what the host remembers across components, and the
// inspection hook the browser tests read (`window.__standinHost`).
import type { ConnectionReply } from '../../src/apps/host/wire.js';
import { Cell } from './cell.js';
import { settings } from './settings.js';

export const connection = new Cell<ConnectionReply | null>(null);

export interface StatusLine {
  text: string;
  kind: 'info' | 'error';
}
export const status = new Cell<StatusLine>({ text: '', kind: 'info' });
export const setStatus = (text: string, kind: StatusLine['kind'] = 'info') => status.set({ text, kind });

/** Widget state per turn: it comes back when the turn's component is rendered again. */
export const widgetStates = new Map<string, unknown>();
/** Moments of the render path (performance timestamps), for the benchmarks. */
export const timings: Record<string, number> = {};
export const now = () => performance.timeOrigin + performance.now();
/** Answers to ui/resource-teardown, for inspection (the frame is gone afterwards). */
export const teardowns: { widgetSessionId: string; reason: string; response: unknown }[] = [];

/** Exposes the host's state to tests and benchmarks. */
export function exposeForInspection(instances: ReadonlySet<unknown>) {
  Object.assign(window, {
    __standinHost: {
      timings,
      instances,
      settings,
      teardowns,
      get connection() {
        return connection.get();
      },
    },
  });
}
