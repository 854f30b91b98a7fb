import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { Type, type TSchema } from 'typebox';

/**
 * Secrets in the config file by reference: where the file holds a key or a signing secret, it may instead
 * say where to read it, `{ file: /etc/standin/app-key }` or `{ env: STANDIN_APP_KEY }`, so the file itself
 * can be kept in version control. References are resolved when the file is read at start, never from a
 * config sent to the control plane (a request must not read the server's files or environment).
 */

/** The fields that hold secrets, as path endings (`*` is an array item or a map entry). */
const SECRET_FIELDS: string[][] = [['admin_key'], ['api_keys', '*', 'value'], ['webhooks', '*', 'secret'], ['api_key']];

const isSecretPath = (path: string[]) =>
  SECRET_FIELDS.some(
    (end) => end.length <= path.length && end.every((seg, i) => seg === '*' || seg === path[path.length - end.length + i]),
  );

type Ref = { file: string } | { env: string };
const isRef = (v: unknown): v is Ref => {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  return keys.length === 1 && (keys[0] === 'file' || keys[0] === 'env') && typeof (v as Record<string, unknown>)[keys[0]] === 'string';
};

/** A dotted name of a path for messages (`organizations[0].projects[0].api_keys[1].value`). */
const named = (path: (string | number)[]) =>
  path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('') || '(root)';

/** Calls `visit` for every reference at a secret field, with its path; the value it returns replaces the reference. */
function walk(doc: unknown, visit: (ref: Ref, at: string) => unknown): unknown {
  const go = (v: unknown, path: (string | number)[]): unknown => {
    if (Array.isArray(v)) return v.map((item, i) => go(item, [...path, i]));
    if (!v || typeof v !== 'object') return v;
    const shape = path.map((p) => (typeof p === 'number' ? '*' : p));
    if (path.length && isRef(v) && isSecretPath(shape)) return visit(v, named(path));
    return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, go(item, [...path, k])]));
  };
  return go(doc, []);
}

/** Longest secret read from a file or variable: a key, not a document. */
const MAX_SECRET = 64 * 1024;

/**
 * Replaces every reference at a secret field with the secret: a file's text less its final line break
 * (a relative path is from `baseDir`, the config file's folder), or an environment variable's value.
 */
export function resolveSecretRefs(doc: unknown, baseDir: string, env: NodeJS.ProcessEnv = process.env): unknown {
  return walk(doc, (ref, at) => {
    let value: string | undefined;
    if ('file' in ref) {
      const path = isAbsolute(ref.file) ? ref.file : join(baseDir, ref.file);
      try {
        value = readFileSync(path, 'utf8').replace(/[\r\n]+$/, '');
      } catch (err) {
        throw new Error(`${at}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      if (!value) throw new Error(`${at}: ${path} is empty`);
    } else {
      value = env[ref.env];
      if (value === undefined || value === '') throw new Error(`${at}: the environment variable ${ref.env} is not set`);
    }
    if (value.length > MAX_SECRET) throw new Error(`${at}: the secret is over 64 KiB`);
    return value;
  });
}

/** Where a document still holds references (a config sent to the control plane): their paths. */
export function secretRefsIn(doc: unknown): string[] {
  const found: string[] = [];
  walk(doc, (ref, at) => (found.push(at), ref));
  return found;
}

/** The config file's schema with the reference form allowed beside the string at every secret field. */
export function allowSecretRefs(schema: TSchema): TSchema {
  const ref = (s: TSchema) =>
    Type.Union([
      s,
      Type.Object(
        { file: Type.String({ minLength: 1, maxLength: 4096, description: 'read the secret from this file' }) },
        { additionalProperties: false },
      ),
      Type.Object(
        { env: Type.String({ minLength: 1, maxLength: 200, description: 'read the secret from this environment variable' }) },
        { additionalProperties: false },
      ),
    ]);
  type Node = { [k: string]: unknown };
  const each = (o: unknown, path: string[]) =>
    Object.fromEntries(Object.entries(o as Record<string, TSchema>).map(([k, v]) => [k, go(v, [...path, k])]));
  const go = (schema: TSchema, path: string[]): TSchema => {
    const s = schema as unknown as Node;
    if (!s || typeof s !== 'object') return schema;
    if (path.length && s.type === 'string' && isSecretPath(path)) return ref(schema);
    const out: Node = { ...s };
    if (s.properties) out.properties = each(s.properties, path);
    if (s.items) out.items = go(s.items as TSchema, [...path, '*']);
    if (s.patternProperties)
      out.patternProperties = Object.fromEntries(
        Object.entries(s.patternProperties as Record<string, TSchema>).map(([k, v]) => [k, go(v, [...path, '*'])]),
      );
    if (s.additionalProperties && typeof s.additionalProperties === 'object')
      out.additionalProperties = go(s.additionalProperties as TSchema, [...path, '*']);
    for (const k of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(s[k])) out[k] = (s[k] as TSchema[]).map((v) => go(v, path));
    return out as unknown as TSchema;
  };
  return go(schema, []);
}
