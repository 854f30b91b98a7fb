import { invalid } from '../core/errors.js';

/** An attribute value of a vector store file. */
export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

/** `filters` of a search (ComparisonFilter / CompoundFilter of the OpenAPI document). */
export type Filter =
  | { type: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte'; key: string; value: AttributeValue }
  | { type: 'in' | 'nin'; key: string; value: (string | number)[] }
  | { type: 'and' | 'or'; filters: Filter[] };

const COMPARISONS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin'];
const MAX_DEPTH = 8;
const MAX_NODES = 256;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const scalar = (v: unknown): v is AttributeValue =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** Checks a `filters` value, naming the exact member on a 400. */
export function parseFilter(input: unknown, param = 'filters'): Filter {
  let nodes = 0;
  const walk = (v: unknown, at: string, depth: number): Filter => {
    if (++nodes > MAX_NODES) throw invalid(`'${param}' may hold at most ${MAX_NODES} filters.`, param, 'invalid_value');
    if (depth > MAX_DEPTH) throw invalid(`'${param}' may nest at most ${MAX_DEPTH} levels.`, at, 'invalid_value');
    if (!isObject(v)) throw invalid(`Invalid type for '${at}': expected an object.`, at, 'invalid_type');
    const type = v.type;
    if (type === 'and' || type === 'or') {
      for (const k of Object.keys(v))
        if (k !== 'type' && k !== 'filters')
          throw invalid(`Unrecognized request argument supplied: '${at}.${k}'.`, `${at}.${k}`, 'unknown_parameter');
      if (!Array.isArray(v.filters)) throw invalid(`Invalid type for '${at}.filters': expected an array.`, `${at}.filters`, 'invalid_type');
      return { type, filters: v.filters.map((f, i) => walk(f, `${at}.filters[${i}]`, depth + 1)) };
    }
    if (typeof type !== 'string' || !COMPARISONS.includes(type)) {
      throw invalid(
        `Invalid value for '${at}.type': ${JSON.stringify(type)}. Supported values are: ${[...COMPARISONS, 'and', 'or'].map((t) => `'${t}'`).join(', ')}.`,
        `${at}.type`,
        'invalid_value',
      );
    }
    for (const k of Object.keys(v))
      if (!['type', 'key', 'value'].includes(k))
        throw invalid(`Unrecognized request argument supplied: '${at}.${k}'.`, `${at}.${k}`, 'unknown_parameter');
    if (typeof v.key !== 'string' || !v.key)
      throw invalid(`Missing required parameter: '${at}.key'.`, `${at}.key`, 'missing_required_parameter');
    if (type === 'in' || type === 'nin') {
      if (!Array.isArray(v.value) || !v.value.every((x) => typeof x === 'string' || (typeof x === 'number' && Number.isFinite(x)))) {
        throw invalid(`'${at}.value' must be an array of strings and numbers for '${type}'.`, `${at}.value`, 'invalid_type');
      }
      return { type, key: v.key, value: v.value as (string | number)[] };
    }
    if (!scalar(v.value)) throw invalid(`'${at}.value' must be a string, a number or a boolean.`, `${at}.value`, 'invalid_type');
    return { type: type as 'eq', key: v.key, value: v.value };
  };
  return walk(input, param, 1);
}

/**
 * Whether a file's attributes pass a filter. Ordering comparisons hold between two numbers or two strings
 * only. A missing attribute passes `ne` and `nin` (it is not equal to the value) and fails the rest.
 */
export function matches(filter: Filter, attributes: Attributes | null): boolean {
  switch (filter.type) {
    case 'and':
      return filter.filters.every((f) => matches(f, attributes));
    case 'or':
      return filter.filters.some((f) => matches(f, attributes));
  }
  const has = attributes !== null && Object.prototype.hasOwnProperty.call(attributes, filter.key);
  const actual = has ? attributes![filter.key] : undefined;
  switch (filter.type) {
    case 'eq':
      return has && actual === filter.value;
    case 'ne':
      return !has || actual !== filter.value;
    case 'in':
      return has && filter.value.some((x) => x === actual);
    case 'nin':
      return !has || !filter.value.some((x) => x === actual);
  }
  if (!has || typeof actual !== typeof filter.value || typeof actual === 'boolean') return false;
  const a = actual as string | number;
  const b = filter.value as string | number;
  switch (filter.type) {
    case 'gt':
      return a > b;
    case 'gte':
      return a >= b;
    case 'lt':
      return a < b;
    case 'lte':
      return a <= b;
  }
}
