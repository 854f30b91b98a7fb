import { describe, expect, it } from 'vitest';
import { createClock } from '../core/clock.js';
import { createFaults, pathMatcher } from './faults.js';

describe('fault path patterns', () => {
  it('a plain path is a prefix', () => {
    const m = pathMatcher('/v1/threads');
    expect(m('/v1/threads')).toBe(true);
    expect(m('/v1/threads/thread_1/runs')).toBe(true);
    expect(m('/v1/responses')).toBe(false);
  });
  it('* stays within a segment, ** crosses segments', () => {
    const one = pathMatcher('/v1/threads/*/runs');
    expect(one('/v1/threads/thread_1/runs')).toBe(true);
    expect(one('/v1/threads/a/b/runs')).toBe(false);
    expect(one('/v1/threads/thread_1/runs/run_1')).toBe(false);
    const any = pathMatcher('/v1/**/runs');
    expect(any('/v1/threads/a/runs')).toBe(true);
    expect(any('/v1/threads/runs')).toBe(true);
  });
  it('regex characters in a glob are literal', () => {
    expect(pathMatcher('/v1/a.b/*')('/v1/axb/c')).toBe(false);
    expect(pathMatcher('/v1/a.b/*')('/v1/a.b/c')).toBe(true);
  });
});

describe('fault table', () => {
  it('fails exactly the next N matching requests, by method', () => {
    const faults = createFaults(createClock());
    const f = faults.add({ path: '/v1/responses', method: 'POST', status: 503, count: 2, retry_after: 1.5 });
    expect(faults.take('GET', '/v1/responses')).toBeNull();
    const e = faults.take('POST', '/v1/responses')!;
    expect(e.status).toBe(503);
    expect(e.code).toBe('server_is_overloaded');
    expect(e.headers).toMatchObject({ 'retry-after': '2', 'retry-after-ms': '1500', 'x-standin-fault': f.id });
    expect(faults.list()[0].remaining).toBe(1);
    expect(faults.take('POST', '/v1/responses')!.status).toBe(503);
    expect(faults.take('POST', '/v1/responses')).toBeNull();
    expect(faults.list()).toEqual([]);
  });
  it('429 is slow_down, 500 a server_error; no Retry-After unless given', () => {
    const faults = createFaults(createClock());
    faults.add({ path: '/v1/', status: 429 });
    faults.add({ path: '/v1/', status: 500 });
    const a = faults.take('GET', '/v1/x')!;
    expect([a.status, a.type, a.code]).toEqual([429, 'rate_limit_error', 'slow_down']);
    expect(a.headers['retry-after']).toBeUndefined();
    const b = faults.take('GET', '/v1/x')!;
    expect([b.status, b.type, b.code]).toEqual([500, 'server_error', null]);
  });
  it('remove and clear', () => {
    const faults = createFaults(createClock());
    const f = faults.add({ path: '/v1/', status: 429, count: 5 });
    expect(faults.remove('fault_nope')).toBe(false);
    expect(faults.remove(f.id)).toBe(true);
    faults.add({ path: '/v1/', status: 429 });
    faults.clear();
    expect(faults.take('GET', '/v1/x')).toBeNull();
  });
});
