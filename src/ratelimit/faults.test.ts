import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import { createFaultTable, newFault, pathMatcher, resolveFault, type Fault, type FaultInput } from './faults.js';

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

/** A fault with a fixed id and time, for the table tests. */
function fault(input: FaultInput, id = 'fault_1'): Fault {
  return newFault(input, id, 0);
}

describe('fault table', () => {
  it('fails exactly the next N matching requests, by method', () => {
    const used: string[] = [];
    const faults = createFaultTable((id) => used.push(id));
    const f = fault({ path: '/v1/responses', method: 'POST', status: 503, count: 2, retry_after: 1.5 });
    faults.replace([f]);
    expect(faults.take('GET', '/v1/responses')).toBeNull();
    const e = faults.take('POST', '/v1/responses')!;
    expect(e.status).toBe(503);
    expect(e.code).toBe('server_is_overloaded');
    expect(e.headers).toMatchObject({ 'retry-after': '2', 'retry-after-ms': '1500', 'x-standin-fault': f.id });
    expect(faults.list()[0].remaining).toBe(1);
    expect(faults.take('POST', '/v1/responses')!.status).toBe(503);
    expect(faults.take('POST', '/v1/responses')).toBeNull();
    expect(faults.list()).toEqual([]);
    expect(used).toEqual([f.id, f.id]);
  });
  it('429 is slow_down, 500 a server_error; no Retry-After unless given', () => {
    const faults = createFaultTable();
    faults.replace([fault({ path: '/v1/', status: 429 }, 'fault_1'), fault({ path: '/v1/', status: 500 }, 'fault_2')]);
    const a = faults.take('GET', '/v1/x')!;
    expect([a.status, a.type, a.code]).toEqual([429, 'rate_limit_error', 'slow_down']);
    expect(a.headers['retry-after']).toBeUndefined();
    const b = faults.take('GET', '/v1/x')!;
    expect([b.status, b.type, b.code]).toEqual([500, 'server_error', null]);
  });
  it('a new copy of the store leaves out uses not yet written back, and an empty one clears', () => {
    const faults = createFaultTable();
    faults.replace([fault({ path: '/v1/', status: 429, count: 5 })], new Map([['fault_1', 3]]));
    expect(faults.list()[0].remaining).toBe(2);
    faults.replace([fault({ path: '/v1/', status: 429, count: 2 })], new Map([['fault_1', 2]]));
    expect(faults.size()).toBe(0);
    faults.replace([fault({ path: '/v1/', status: 429 })]);
    faults.replace([]);
    expect(faults.take('GET', '/v1/x')).toBeNull();
  });
});

describe('fault type and code', () => {
  it('may be any the platform answers with: rate_limit_exceeded, insufficient_quota (not retried), a message of its own', () => {
    const faults = createFaultTable();
    faults.replace([
      fault({ path: '/v1/', status: 429, code: 'rate_limit_exceeded', retry_after: 2 }, 'fault_1'),
      fault({ path: '/v1/', type: 'insufficient_quota' }, 'fault_2'),
      fault({ path: '/v1/', type: 'service_unavailable_error', code: 'engine_overloaded', message: 'Busy.' }, 'fault_3'),
      fault({ path: '/v1/', status: 429, type: 'invalid_request_error' }, 'fault_4'),
    ]);
    const a = faults.take('GET', '/v1/x')!;
    expect([a.status, a.type, a.code, a.headers['retry-after-ms']]).toEqual([429, 'rate_limit_error', 'rate_limit_exceeded', '2000']);
    expect(a.message).toMatch(/^Rate limit reached/);
    const b = faults.take('GET', '/v1/x')!;
    expect([b.status, b.type, b.code, b.headers['x-should-retry']]).toEqual([429, 'insufficient_quota', 'insufficient_quota', 'false']);
    expect(b.message).toBe('You exceeded your current quota, please check your plan and billing details.');
    const c = faults.take('GET', '/v1/x')!;
    expect([c.status, c.type, c.code, c.message]).toEqual([503, 'service_unavailable_error', 'engine_overloaded', 'Busy.']);
    // The spec's earlier answer to video requests.
    const d = faults.take('GET', '/v1/x')!;
    expect([d.status, d.type, d.code]).toEqual([429, 'invalid_request_error', 'rate_limit_exceeded']);
  });
  it("is checked against the error type table: the type must answer the fault's status", () => {
    expect(resolveFault({ path: '/v1/', type: 'server_error' })).toEqual({ status: 500, type: 'server_error', code: null });
    expect(resolveFault({ path: '/v1/', status: 429, code: null })).toEqual({ status: 429, type: 'rate_limit_error', code: null });
    for (const bad of [
      { path: '/v1/', status: 503, type: 'rate_limit_error' },
      { path: '/v1/', status: 500, type: 'insufficient_quota' },
      { path: '/v1/', type: 'not_found_error' },
      { path: '/v1/', status: 503, type: 'invalid_request_error' },
      { path: '/v1/' },
    ] as FaultInput[]) {
      const e = (() => {
        try {
          resolveFault(bad);
        } catch (err) {
          return err as ApiError;
        }
      })();
      expect(e, JSON.stringify(bad)).toBeInstanceOf(ApiError);
      expect([e!.status, e!.type]).toEqual([400, 'invalid_request_error']);
      expect(['type', 'status']).toContain(e!.param);
    }
  });
});
