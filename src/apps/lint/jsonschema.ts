import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type AnyAjv = Ajv | Ajv2019 | Ajv2020;
const engines = new Map<string, AnyAjv>();

/** The ajv engine for a schema's dialect: draft-07 (what zod-to-json-schema emits), 2019-09, or 2020-12 (the default). */
function engineFor(schema: unknown): AnyAjv {
  const declared = typeof schema === 'object' && schema !== null && '$schema' in schema ? schema.$schema : undefined;
  const dialect = typeof declared === 'string' ? declared : '';
  const kind = /draft-0[4-7]/.test(dialect) ? '07' : /2019-09/.test(dialect) ? '2019' : '2020';
  let ajv = engines.get(kind);
  if (!ajv) {
    const opts = { strict: false, allErrors: true, validateSchema: false, validateFormats: true };
    ajv = kind === '07' ? new Ajv(opts) : kind === '2019' ? new Ajv2019(opts) : new Ajv2020(opts);
    // ajv-formats is CommonJS: under NodeNext its plugin is the default export's `default`.
    addFormats.default(ajv);
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
  for (const s of segments)
    path = /^\d+$/.test(s) ? `${path}[${s}]` : /^[A-Za-z_$][\w$]*$/.test(s) ? `${path}.${s}` : `${path}[${JSON.stringify(s)}]`;
  const p: Record<string, unknown> = e.params;
  let message: string;
  switch (e.keyword) {
    case 'required': {
      const name = String(p.missingProperty);
      path = /^[A-Za-z_$][\w$]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`;
      message = 'is required';
      break;
    }
    case 'additionalProperties':
      message = `has an unexpected property '${String(p.additionalProperty)}'`;
      break;
    case 'const':
      message = `must be ${JSON.stringify(p.allowedValue)}`;
      break;
    case 'enum':
      message = `must be one of ${(Array.isArray(p.allowedValues) ? p.allowedValues : []).map((v) => JSON.stringify(v)).join(', ')}`;
      break;
    case 'type':
      message = `must be of type ${String(p.type)}`;
      break;
    default:
      message = e.message ?? e.keyword;
  }
  return { path, message };
}
