import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { openEventStream, writeFrame } from './sse.js';

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

describe('an event stream', () => {
  it('sends its first frame at once, not at the end of the chain of promises that wrote it', async () => {
    const seen: { corked: number; buffered: number }[] = [];
    const app = Fastify();
    app.get('/', (request, reply) => {
      const raw = reply.raw;
      openEventStream(request, reply);
      void (async () => {
        // Inside a chain of promises, as after a store read: the tick that began it does not end before the chain does.
        await Promise.resolve();
        await writeFrame(raw, 'event: first\ndata: {}\n\n');
        // Still in that chain: Node corks a response's writes until the next tick.
        seen.push({ corked: raw.socket!.writableCorked, buffered: raw.socket!.writableLength });
        await writeFrame(raw, 'event: second\ndata: {}\n\n');
        raw.end();
      })();
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const res = await fetch(url);
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(await res.text()).toBe('event: first\ndata: {}\n\nevent: second\ndata: {}\n\n');
      expect(seen).toEqual([{ corked: 0, buffered: 0 }]);
    } finally {
      await app.close();
    }
  });
});
