import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import { createFaultTable, faultError, newFault, pathMatcher, resolveFault, rollOf, type Fault, type FaultInput } from './faults.js';

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

/** The error a (failing) fault answers with. */
function errorOf(f: Fault): ApiError {
  if (f.status === null || f.type === null) throw new Error('a delay-only fault answers no error');
  return faultError({ ...f, status: f.status, type: f.type });
}

describe('fault table', () => {
  it('knows which live faults a request matches, by method and path, oldest first', () => {
    const faults = createFaultTable();
    const a = fault({ path: '/v1/responses', method: 'POST', status: 503, count: 2 }, 'fault_1');
    const b = fault({ path: '/v1/', status: 429 }, 'fault_2');
    faults.replace([a, b]);
    expect(faults.matching('GET', '/v1/responses').map((f) => f.id)).toEqual(['fault_2']);
    expect(faults.matching('POST', '/v1/responses').map((f) => f.id)).toEqual(['fault_1', 'fault_2']);
    expect(faults.matching('GET', '/healthz')).toEqual([]);
  });
  it('follows claims: a count left updates the copy, none left (or a fault gone) drops it', () => {
    const faults = createFaultTable();
    faults.replace([fault({ path: '/v1/', status: 429, count: 5 }, 'fault_1'), fault({ path: '/v1/', status: 500 }, 'fault_2')]);
    faults.update('fault_1', 2);
    expect(faults.list().map((f) => [f.id, f.remaining])).toEqual([
      ['fault_1', 2],
      ['fault_2', 1],
    ]);
    faults.update('fault_1', 0);
    faults.update('fault_2', undefined);
    expect(faults.size()).toBe(0);
    faults.replace([fault({ path: '/v1/', status: 429, count: 0 })]);
    expect(faults.matching('GET', '/v1/x')).toEqual([]);
  });
});

describe('fault probability and latency', () => {
  it('a seeded roll is repeatable and takes about the asked share', () => {
    const rolls = (seed: number) => Array.from({ length: 2000 }, (_, i) => rollOf(seed, i + 1, 0.3));
    expect(rolls(7)).toEqual(rolls(7));
    expect(rolls(7)).not.toEqual(rolls(8));
    const share = rolls(7).filter(Boolean).length / 2000;
    expect(share).toBeGreaterThan(0.25);
    expect(share).toBeLessThan(0.35);
    expect(Array.from({ length: 100 }, (_, i) => rollOf(1, i + 1, 1)).every(Boolean)).toBe(true);
  });
  it('a fault with a latency and no status only delays; its defaults are probability 1, no seed', () => {
    expect(fault({ path: '/v1/', latency_ms: 200 })).toMatchObject({
      status: null,
      type: null,
      code: null,
      latency_ms: 200,
      probability: 1,
      seed: null,
    });
    expect(fault({ path: '/v1/', status: 503, latency_ms: 50, probability: 0.5, seed: 3 })).toMatchObject({
      status: 503,
      latency_ms: 50,
      probability: 0.5,
      seed: 3,
    });
  });
  it('refuses what a delay-only fault cannot use, and a seed without a probability, naming the field', () => {
    for (const [bad, param] of [
      [{ path: '/v1/', latency_ms: 10, code: 'x' }, 'code'],
      [{ path: '/v1/', latency_ms: 10, retry_after: 1 }, 'retry_after'],
      [{ path: '/v1/', latency_ms: 0 }, 'status'],
      [{ path: '/v1/', status: 429, seed: 1 }, 'seed'],
    ] as [FaultInput, string][]) {
      const e = (() => {
        try {
          fault(bad);
        } catch (err) {
          return err as ApiError;
        }
      })();
      expect(e, JSON.stringify(bad)).toBeInstanceOf(ApiError);
      expect([e!.status, e!.param]).toEqual([400, param]);
    }
  });
});

describe('fault type and code', () => {
  it('a fault answers its status and code, Retry-After only when given', () => {
    const e = errorOf(fault({ path: '/v1/responses', method: 'POST', status: 503, count: 2, retry_after: 1.5 }));
    expect([e.status, e.code]).toEqual([503, 'server_is_overloaded']);
    expect(e.headers).toMatchObject({ 'retry-after': '2', 'retry-after-ms': '1500', 'x-standin-fault': 'fault_1' });
    const a = errorOf(fault({ path: '/v1/', status: 429 }));
    expect([a.status, a.type, a.code]).toEqual([429, 'rate_limit_error', 'slow_down']);
    expect(a.headers['retry-after']).toBeUndefined();
    const b = errorOf(fault({ path: '/v1/', status: 500 }));
    expect([b.status, b.type, b.code]).toEqual([500, 'server_error', null]);
  });
  it('may be any the platform answers with: rate_limit_exceeded, insufficient_quota (not retried), a message of its own', () => {
    const a = errorOf(fault({ path: '/v1/', status: 429, code: 'rate_limit_exceeded', retry_after: 2 }));
    expect([a.status, a.type, a.code, a.headers['retry-after-ms']]).toEqual([429, 'rate_limit_error', 'rate_limit_exceeded', '2000']);
    expect(a.message).toMatch(/^Rate limit reached/);
    const b = errorOf(fault({ path: '/v1/', type: 'insufficient_quota' }));
    expect([b.status, b.type, b.code, b.headers['x-should-retry']]).toEqual([429, 'insufficient_quota', 'insufficient_quota', 'false']);
    expect(b.message).toBe('You exceeded your current quota, please check your plan and billing details.');
    const c = errorOf(fault({ path: '/v1/', type: 'service_unavailable_error', code: 'engine_overloaded', message: 'Busy.' }));
    expect([c.status, c.type, c.code, c.message]).toEqual([503, 'service_unavailable_error', 'engine_overloaded', 'Busy.']);
    // The spec's earlier answer to video requests.
    const d = errorOf(fault({ path: '/v1/', status: 429, type: 'invalid_request_error' }));
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
