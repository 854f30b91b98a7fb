import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; its default export sits on .default under NodeNext.
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (ajv: any) => void;

type AnyAjv = Ajv | Ajv2019 | Ajv2020;
const engines = new Map<string, AnyAjv>();

/** The ajv engine for a schema's dialect: draft-07 (what zod-to-json-schema emits), 2019-09, or 2020-12 (the default). */
function engineFor(schema: unknown): AnyAjv {
  const dialect = typeof (schema as any)?.$schema === 'string' ? String((schema as any).$schema) : '';
  const kind = /draft-0[4-7]/.test(dialect) ? '07' : /2019-09/.test(dialect) ? '2019' : '2020';
  let ajv = engines.get(kind);
  if (!ajv) {
    const opts = { strict: false, allErrors: true, validateSchema: false, validateFormats: true };
    ajv = kind === '07' ? new Ajv(opts) : kind === '2019' ? new Ajv2019(opts) : new Ajv2020(opts);
    addFormats(ajv);
    engines.set(kind, ajv);
  }
  return ajv;
}

/** Compiles a tool's JSON Schema; returns the validator or the reason it cannot be compiled. */
export function compileSchema(schema: unknown): { validate?: ValidateFunction; error?: string } {
  try {
    const copy = { ...(schema as object) } as Record<string, unknown>;
    // Schemas from different servers may reuse $id values; compiled validators are not cached by id here.
    delete copy.$id;
    return { validate: engineFor(schema).compile(copy) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** Turns an ajv error into `$.a.b: must be …`-style text relative to `base`. */
export function describeAjvError(base: string, e: ErrorObject): { path: string; message: string } {
  const segments = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let path = base;
  for (const s of segments) path = /^\d+$/.test(s) ? `${path}[${s}]` : /^[A-Za-z_$][\w$]*$/.test(s) ? `${path}.${s}` : `${path}[${JSON.stringify(s)}]`;
  const p = e.params as any;
  let message: string;
  switch (e.keyword) {
    case 'required':
      path = /^[A-Za-z_$][\w$]*$/.test(p.missingProperty) ? `${path}.${p.missingProperty}` : `${path}[${JSON.stringify(p.missingProperty)}]`;
      message = 'is required';
      break;
    case 'additionalProperties':
      message = `has an unexpected property '${p.additionalProperty}'`;
      break;
    case 'const':
      message = `must be ${JSON.stringify(p.allowedValue)}`;
      break;
    case 'enum':
      message = `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
      break;
    case 'type':
      message = `must be of type ${p.type}`;
      break;
    default:
      message = e.message ?? e.keyword;
  }
  return { path, message };
}
