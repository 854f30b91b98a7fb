import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { writeFrame } from './sse.js';

describe('writeFrame', () => {
  it('waits for each drain of a slow reader and leaves no listener behind', async () => {
    const received: string[] = [];
    // A reader that takes every frame a moment later: each write fills it, then it drains.
    const slow = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _enc, cb) {
        received.push(chunk.toString());
        setImmediate(cb);
      },
    });
    for (let i = 0; i < 50; i++) await writeFrame(slow, `event: e\ndata: ${i}\n\n`);
    expect(received).toHaveLength(50);
    expect(slow.listenerCount('close')).toBe(0);
    expect(slow.listenerCount('drain')).toBe(0);
  });

  it('a reader gone mid-wait ends the wait', async () => {
    const stuck = new Writable({ highWaterMark: 1, write: () => {} });
    const waiting = writeFrame(stuck, 'event: e\ndata: 1\n\n');
    stuck.destroy();
    await waiting;
    expect(stuck.listenerCount('drain')).toBe(0);
  });
});
