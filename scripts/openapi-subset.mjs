// Extracts from the platform's official OpenAPI document the operations Standin shares with it, and the
// components they reference, into test/conformance/openai-subset.json: the tests hold Standin's replies
// against it (test/conformance/validator.ts) on any clone, with or without ../shared beside it.
//
//   node scripts/openapi-subset.mjs [official.yaml [out.json]]
//
// An operation is shared when Standin declares a /v1 route of the same method and path template (the
// names of path parameters aside). Standin's routes are read from its sources (`app.post('/v1/…'`), so no
// build is needed; test/conformance/conformance.test.ts checks the result against the running app.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const [source = join(root, '../shared/reference/openai-openapi.yaml'), out = join(root, 'test/conformance/openai-subset.json')] =
  process.argv.slice(2);

/** `/v1/threads/:thread_id` and `/threads/{thread_id}` both read `/threads/{}`. */
export const pathKey = (path) =>
  path
    .replace(/^\/v1(?=\/)/, '')
    .replace(/:\w+/g, '{}')
    .replace(/\{\w+\}/g, '{}');

function standinRoutes(dir) {
  const routes = new Set();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    for (const m of text.matchAll(/\.(get|post|delete|put|patch)\(\s*'(\/v1\/[^']+)'/g)) routes.add(`${m[1]} ${pathKey(m[2])}`);
  }
  return routes;
}

/** The request bodies of the curl examples (`-d '…'`); multipart (`-F`) examples are kept as their fields. */
function curlExamples(meta) {
  const examples = meta?.examples;
  const list = Array.isArray(examples) ? examples : examples ? [examples] : [];
  return list.flatMap((ex) => {
    const curl = typeof ex.request === 'string' ? ex.request : ex.request?.curl;
    if (typeof curl !== 'string') return [];
    const data = /\s-d\s+'([\s\S]*?)'\s*$/m.exec(curl) ?? /\s-d\s+'([\s\S]*?)'/.exec(curl);
    const form = [...curl.matchAll(/\s-F\s+"?([\w[\]]+)=("[^"]*"|[^\s"\\]+)"?/g)].map((m) => [m[1], m[2].replace(/^"|"$/g, '')]);
    return [
      { title: ex.title ?? 'Default', ...(data ? { body: data[1] } : {}), ...(form.length ? { form: Object.fromEntries(form) } : {}) },
    ];
  });
}

// Words for people, not rules: left out, so the file holds only what validation reads.
const ANNOTATIONS = new Set(['description', 'title', 'example', 'examples', 'deprecated', 'default']);
/** A schema without its annotations and `x-` extensions (a property named `description` stays). */
function lean(node, inMap = false) {
  if (Array.isArray(node)) return node.map((n) => lean(n));
  if (!node || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (!inMap && (ANNOTATIONS.has(k) || k.startsWith('x-'))) continue;
    // The document lists some `required` names twice (ContainerResource): JSON Schema wants each once.
    if (!inMap && k === 'required' && Array.isArray(v)) out[k] = [...new Set(v)];
    else out[k] = lean(v, !inMap && (k === 'properties' || k === 'patternProperties' || k === '$defs'));
  }
  return out;
}

const doc = parse(readFileSync(source, 'utf8'), { maxAliasCount: -1 });
const shared = standinRoutes(join(root, 'src'));
const operations = {};
const wanted = new Set();
const refsOf = (node) => {
  if (Array.isArray(node)) node.forEach(refsOf);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') wanted.add(v);
      else refsOf(v);
    }
  }
};
for (const [path, item] of Object.entries(doc.paths)) {
  if (path.includes('?')) continue;
  for (const method of ['get', 'post', 'delete', 'put', 'patch']) {
    const op = item[method];
    if (!op || !shared.has(`${method} ${pathKey(path)}`)) continue;
    const responses = {};
    // The schema of one event of a `text/event-stream` reply, where the document gives one.
    const events = {};
    for (const [status, response] of Object.entries(op.responses ?? {})) {
      const resolved = response.$ref ? doc.components.responses[response.$ref.split('/').pop()] : response;
      const schema = resolved?.content?.['application/json']?.schema;
      if (schema) responses[status] = schema;
      const event = resolved?.content?.['text/event-stream']?.schema;
      if (event) events[status] = event;
    }
    operations[`${method.toUpperCase()} ${path}`] = {
      operationId: op.operationId,
      responses: lean(responses),
      ...(Object.keys(events).length ? { events: lean(events) } : {}),
      examples: curlExamples(op['x-oaiMeta']),
    };
    refsOf(responses);
    refsOf(events);
  }
}
// The components the operations reference, and theirs in turn.
const schemas = {};
for (const seen = new Set(); ;) {
  const next = [...wanted].filter((r) => !seen.has(r));
  if (!next.length) break;
  for (const ref of next) {
    seen.add(ref);
    const name = ref.split('/').pop();
    schemas[name] = lean(doc.components.schemas[name]);
    refsOf(schemas[name]);
  }
}
const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
const json = JSON.stringify({
  source: `openai-openapi.yaml ${doc.info.version}`,
  operations: sorted(operations),
  components: { schemas: sorted(schemas) },
});
// Written as the repository's formatter would write it, so `prettier --check .` holds.
writeFileSync(out, await format(json, { ...(await resolveConfig(join(root, 'test/conformance/openai-subset.json'))), filepath: out }));
console.log(`${Object.keys(operations).length} operations, ${Object.keys(schemas).length} components → ${out}`);
