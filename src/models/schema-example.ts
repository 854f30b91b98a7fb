/**
 * Builds a deterministic value that satisfies a JSON Schema, for the built-in provider: the arguments of
 * a forced function call and the body of a `json_schema` reply. It prefers what the schema itself offers
 * (`const`, `default`, the first `enum` value, the first `examples` entry) and otherwise the plainest
 * value of the type, respecting the usual bounds (minLength, minimum, minItems). Only required
 * properties are filled, as a model would when it has nothing to say about the rest.
 */
type Schema = Record<string, any>;

const MAX_DEPTH = 8;

/** A value satisfying `schema` (best effort for exotic keywords), resolving local `$ref`s against `root`. */
export function exampleFor(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > MAX_DEPTH) return null;
  const s = schema as Schema;
  if (typeof s.$ref === 'string') return exampleFor(resolveRef(s.$ref, root), root, depth + 1);
  if ('const' in s) return s.const;
  if ('default' in s) return s.default;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[key]) && s[key].length) {
      const nonNull = s[key].find((x: Schema) => x && x.type !== 'null') ?? s[key][0];
      return exampleFor(nonNull, root, depth + 1);
    }
  }
  if (Array.isArray(s.allOf) && s.allOf.length) {
    const merged: Schema = {};
    for (const part of s.allOf) Object.assign(merged, part, { properties: { ...(merged.properties ?? {}), ...(part?.properties ?? {}) } });
    return exampleFor(merged, root, depth + 1);
  }
  const type = Array.isArray(s.type) ? (s.type.find((t: string) => t !== 'null') ?? s.type[0]) : s.type;
  switch (type ?? (s.properties ? 'object' : s.items ? 'array' : undefined)) {
    case 'string':
      return stringExample(s);
    case 'integer':
    case 'number':
      return numberExample(s, type === 'integer');
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const n = Math.max(0, Number(s.minItems) || 0);
      const out: unknown[] = [];
      for (let i = 0; i < Math.min(n, 16); i++) out.push(exampleFor(s.items ?? {}, root, depth + 1));
      return out;
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      const props: Schema = s.properties ?? {};
      const required: string[] = Array.isArray(s.required) ? s.required : [];
      for (const name of required) out[name] = exampleFor(props[name] ?? {}, root, depth + 1);
      return out;
    }
    default:
      return s.properties ? exampleFor({ ...s, type: 'object' }, root, depth + 1) : null;
  }
}

function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith('#')) return {};
  let node: any = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = node?.[part];
  }
  return node ?? {};
}

function stringExample(s: Schema): string {
  switch (s.format) {
    case 'date-time':
      return '2026-01-01T00:00:00Z';
    case 'date':
      return '2026-01-01';
    case 'time':
      return '00:00:00';
    case 'email':
      return 'user@example.com';
    case 'uri':
    case 'url':
      return 'https://example.com';
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000';
  }
  let value = 'example';
  const min = Number(s.minLength) || 0;
  if (value.length < min) value = value.padEnd(min, 'x');
  if (typeof s.maxLength === 'number' && value.length > s.maxLength) value = value.slice(0, s.maxLength);
  return value;
}

function numberExample(s: Schema, integer: boolean): number {
  let n = 0;
  if (typeof s.minimum === 'number') n = Math.max(n, s.minimum);
  if (typeof s.exclusiveMinimum === 'number') n = Math.max(n, s.exclusiveMinimum + (integer ? 1 : 0.5));
  if (typeof s.maximum === 'number') n = Math.min(n, s.maximum);
  if (typeof s.exclusiveMaximum === 'number' && n >= s.exclusiveMaximum) n = s.exclusiveMaximum - (integer ? 1 : 0.5);
  return integer ? Math.ceil(n) : n;
}
