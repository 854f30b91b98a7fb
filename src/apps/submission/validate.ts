import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { child, type Finding } from '../lint/findings.js';
import { describeAjvError } from '../lint/jsonschema.js';
import type { ToolDescriptor } from '../lint/descriptor.js';
import { parseJsonStrict } from './json.js';
import { submissionSchema } from './schema.js';

const compiled = new Map<string, ValidateFunction>();
function validatorFor(schemaUrl: string): ValidateFunction {
  let v = compiled.get(schemaUrl);
  if (!v) {
    const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
    v = ajv.compile(submissionSchema(schemaUrl));
    compiled.set(schemaUrl, v);
  }
  return v;
}

export interface SubmissionOptions {
  /** The `$schema` constant (see `submissionSchemaUrl`). */
  schemaUrl: string;
  /** Descriptors from the live server, when known: the file's tools and annotations are compared with them. */
  descriptors?: ToolDescriptor[];
}

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Validates the text of a submission import file: JSON syntax, duplicate keys, the schema, then what a schema cannot say. */
export function validateSubmissionText(text: string, opts: SubmissionOptions): Finding[] {
  const parsed = parseJsonStrict(text.replace(/^\uFEFF/, ''));
  if (parsed.error)
    return [
      {
        severity: 'error',
        rule: 'json.syntax',
        path: '$',
        message: `not valid JSON at line ${parsed.error.line}, column ${parsed.error.column}: ${parsed.error.message}`,
      },
    ];
  const out: Finding[] = parsed.duplicates.map((d) => ({
    severity: 'error',
    rule: 'json.duplicateKey',
    path: d.path,
    message: `${d.path}: "${d.key}" appears more than once in the same object (line ${d.line}); only the last one would count`,
  }));
  return [...out, ...validateSubmission(parsed.value, opts)];
}

/** Validates a parsed import file. */
export function validateSubmission(doc: unknown, opts: SubmissionOptions): Finding[] {
  const out: Finding[] = [];
  const validate = validatorFor(opts.schemaUrl);
  if (!validate(doc)) {
    const seen = new Set<string>();
    const typed = new Set((validate.errors ?? []).filter((e) => e.keyword === 'type').map((e) => e.instancePath));
    for (const e of validate.errors ?? []) {
      if (e.keyword === 'const' && typed.has(e.instancePath)) continue; // one message per field: the type says it
      const d = describeAjvError('$', e);
      const params: Record<string, unknown> = e.params;
      const value = valueAt(doc, e.instancePath);
      let message = d.message;
      if (e.keyword === 'pattern') message = 'must not be blank';
      else if (e.keyword === 'maxLength')
        message = `must be at most ${String(params.limit)} characters (it has ${[...String(value)].length})`;
      else if (e.keyword === 'minItems')
        message = `must have at least ${String(params.limit)} items (it has ${Array.isArray(value) ? value.length : 0})`;
      else if (e.keyword === 'const' && e.instancePath === '/$schema') message = `must be ${JSON.stringify(opts.schemaUrl)}`;
      else if (e.keyword === 'const' && e.instancePath === '/schema_version') message = 'must be 1 (the only schema version)';
      else if (e.keyword === 'type' && params.type === 'integer' && e.instancePath === '/schema_version') message = 'must be the integer 1';
      const key = `${d.path} ${message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ severity: 'error', rule: `schema.${e.keyword}`, path: d.path, message: `${d.path} ${message}` });
    }
  }
  if (!isObj(doc)) return out;
  beyondSchema(doc, out, opts);
  return out;
}

function valueAt(doc: unknown, pointer: string): unknown {
  let cur: unknown = doc;
  for (const seg of pointer.split('/').slice(1)) {
    const key = seg.replace(/~1/g, '/').replace(/~0/g, '~');
    cur = Array.isArray(cur) ? cur[Number(key)] : isObj(cur) ? cur[key] : undefined;
  }
  return cur;
}

/** The rules a JSON Schema cannot state: cross references between parts of the file, and against the live server. */
function beyondSchema(doc: Record<string, any>, out: Finding[], opts: SubmissionOptions) {
  const tools = isObj(doc.tools) ? doc.tools : undefined;
  const names = tools ? Object.keys(tools) : [];
  if (tools) {
    if (names.length === 0)
      out.push({
        severity: 'error',
        rule: 'tools.empty',
        path: '$.tools',
        message: '$.tools is empty: list every tool of the app with its annotations and justifications',
      });
    for (const name of names) {
      const p = child('$.tools', name);
      if (!name.trim()) out.push({ severity: 'error', rule: 'tools.name', path: p, message: `${p} has a blank tool name` });
      const a = tools[name]?.annotations;
      if (isObj(a) && a.readOnlyHint === true && a.destructiveHint === true)
        out.push({
          severity: 'error',
          rule: 'tools.annotations.consistent',
          path: child(p, 'annotations'),
          message: `${child(p, 'annotations')} says the tool is read-only and destructive at once`,
        });
    }
  }
  // tools_triggered names tools of this file (a comma-separated list is accepted).
  const checkTriggered = (list: unknown, key: string) => {
    if (!Array.isArray(list) || !tools) return;
    list.forEach((tc, i) => {
      const t = isObj(tc) ? tc.tools_triggered : undefined;
      if (typeof t !== 'string' || !t.trim()) return;
      const p = child(child(child('$', key), i), 'tools_triggered');
      for (const n of t
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        if (!names.includes(n))
          out.push({
            severity: 'warning',
            rule: 'testCases.toolsTriggered',
            path: p,
            message: `${p} names '${n}', which is not in $.tools (known: ${names.join(', ') || 'none'})`,
          });
      }
    });
  };
  checkTriggered(doc.test_cases, 'test_cases');
  checkTriggered(doc.negative_test_cases, 'negative_test_cases');
  // URLs must be absolute http(s) URLs the reviewers can open.
  for (const key of ['test_cases', 'negative_test_cases']) {
    if (!Array.isArray(doc[key])) continue;
    doc[key].forEach((tc: any, i: number) => {
      if (!isObj(tc)) return;
      const base = child(child('$', key), i);
      const urls: [string, unknown][] = [['expected_output_url', tc.expected_output_url]];
      if (Array.isArray(tc.file_attachment_urls))
        tc.file_attachment_urls.forEach((u: unknown, j: number) => urls.push([`file_attachment_urls[${j}]`, u]));
      for (const [field, u] of urls) {
        if (typeof u !== 'string') continue;
        let ok = false;
        try {
          ok = /^https?:$/.test(new URL(u).protocol);
        } catch {
          /* not a URL */
        }
        const p = `${base}.${field}`;
        if (!ok)
          out.push({
            severity: 'error',
            rule: 'testCases.url',
            path: p,
            message: `${p} must be an absolute http(s) URL, got ${JSON.stringify(u)}`,
          });
      }
    });
    // The same prompt twice tests nothing new.
    const prompts = new Map<string, number>();
    doc[key].forEach((tc: any, i: number) => {
      const prompt = isObj(tc) && typeof tc.user_prompt === 'string' ? tc.user_prompt.trim().toLowerCase() : undefined;
      if (!prompt) return;
      if (prompts.has(prompt))
        out.push({
          severity: 'warning',
          rule: 'testCases.duplicate',
          path: `${child(child('$', key), i)}.user_prompt`,
          message: `${child(child('$', key), i)}.user_prompt repeats ${key}[${prompts.get(prompt)}]`,
        });
      else prompts.set(prompt, i);
    });
  }
  // Against the live server: every tool listed, annotations equal to the descriptors'.
  if (opts.descriptors && tools) {
    const live = new Map(opts.descriptors.map((d) => [d.name, d]));
    for (const name of names) {
      const d = live.get(name);
      const p = child('$.tools', name);
      if (!d) {
        out.push({ severity: 'error', rule: 'server.unknownTool', path: p, message: `${p}: the server has no tool '${name}'` });
        continue;
      }
      const a = tools[name]?.annotations;
      for (const hint of ['readOnlyHint', 'openWorldHint', 'destructiveHint']) {
        const mine = isObj(a) ? a[hint] : undefined;
        const theirs = isObj(d.annotations) ? d.annotations[hint] : undefined;
        if (typeof mine === 'boolean' && mine !== theirs)
          out.push({
            severity: 'error',
            rule: 'server.annotationMismatch',
            path: `${p}.annotations.${hint}`,
            message: `${p}.annotations.${hint} is ${mine} but the server's descriptor says ${JSON.stringify(theirs)}`,
          });
      }
    }
    for (const d of opts.descriptors) {
      if (!names.includes(d.name))
        out.push({
          severity: 'error',
          rule: 'server.missingTool',
          path: child('$.tools', d.name),
          message: `the server's tool '${d.name}' is missing from $.tools`,
        });
    }
  }
}
