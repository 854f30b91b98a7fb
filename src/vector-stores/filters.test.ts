import { describe, expect, it } from 'vitest';
import { matches, parseFilter } from './filters.js';

describe('attribute filters', () => {
  const attrs = { region: 'eu', year: 2024, draft: false };

  it('compares, and combines with and/or', () => {
    const f = (x: unknown) => matches(parseFilter(x), attrs);
    expect(f({ type: 'eq', key: 'region', value: 'eu' })).toBe(true);
    expect(f({ type: 'ne', key: 'region', value: 'eu' })).toBe(false);
    expect(f({ type: 'gt', key: 'year', value: 2023 })).toBe(true);
    expect(f({ type: 'gte', key: 'year', value: 2024 })).toBe(true);
    expect(f({ type: 'lt', key: 'year', value: 2024 })).toBe(false);
    expect(f({ type: 'lte', key: 'year', value: 2024 })).toBe(true);
    expect(f({ type: 'gt', key: 'year', value: '2023' })).toBe(false);
    expect(f({ type: 'eq', key: 'draft', value: false })).toBe(true);
    expect(f({ type: 'in', key: 'region', value: ['us', 'eu'] })).toBe(true);
    expect(f({ type: 'nin', key: 'region', value: ['us', 'eu'] })).toBe(false);
    expect(
      f({
        type: 'and',
        filters: [
          { type: 'eq', key: 'region', value: 'eu' },
          { type: 'lt', key: 'year', value: 2000 },
        ],
      }),
    ).toBe(false);
    expect(
      f({
        type: 'or',
        filters: [
          { type: 'eq', key: 'region', value: 'us' },
          { type: 'gte', key: 'year', value: 2000 },
        ],
      }),
    ).toBe(true);
  });

  it('lets a missing attribute pass ne and nin only', () => {
    const f = (x: unknown) => matches(parseFilter(x), null);
    expect(f({ type: 'eq', key: 'region', value: 'eu' })).toBe(false);
    expect(f({ type: 'ne', key: 'region', value: 'eu' })).toBe(true);
    expect(f({ type: 'nin', key: 'region', value: ['eu'] })).toBe(true);
    expect(f({ type: 'gt', key: 'year', value: 1 })).toBe(false);
  });

  it('names the member at fault', () => {
    const param = (x: unknown) => {
      try {
        parseFilter(x);
      } catch (err) {
        return (err as { param: string }).param;
      }
    };
    expect(param({ type: 'like', key: 'a', value: 'b' })).toBe('filters.type');
    expect(param({ type: 'eq', value: 'b' })).toBe('filters.key');
    expect(param({ type: 'eq', key: 'a', value: { x: 1 } })).toBe('filters.value');
    expect(param({ type: 'in', key: 'a', value: 'b' })).toBe('filters.value');
    expect(
      param({
        type: 'and',
        filters: [
          { type: 'eq', key: 'a', value: 1 },
          { type: 'or', filters: [{ type: 'gt', key: 'a' }] },
        ],
      }),
    ).toBe('filters.filters[1].filters[0].value');
    expect(param({ type: 'eq', key: 'a', value: 1, extra: 2 })).toBe('filters.extra');
    expect(param('eq')).toBe('filters');
  });
});
