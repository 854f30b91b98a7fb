import { child, type Finding } from './findings.js';
import { compileSchema, describeAjvError } from './jsonschema.js';

/** A tool descriptor as `tools/list` returns it (plus the `securitySchemes` member the spec adds). */
export interface ToolDescriptor {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: any;
  outputSchema?: any;
  annotations?: Record<string, unknown>;
  securitySchemes?: unknown;
  _meta?: Record<string, any>;
  [k: string]: unknown;
}

/** One content item of a `resources/read` result. */
export interface ResourceContent {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
  _meta?: Record<string, any>;
}

/** A sample call made while linting: the arguments sent and the result (or the error) received. */
export interface SampleCall {
  tool: string;
  arguments: Record<string, unknown>;
  result?: any;
  error?: string;
}

export interface LintInput {
  tools: ToolDescriptor[];
  /** UI templates read from the server, by URI; `error` when reading failed. */
  resources?: Record<string, { contents?: ResourceContent[]; error?: string }>;
  samples?: SampleCall[];
}

export interface LintOptions {
  /** The host's name: the prefix of `<vendor>/outputTemplate` and the other host keys. */
  vendor: string;
  /** Submission rules (ui.domain required, CSP origins over https) are errors when true, warnings when false. */
  submission?: boolean;
}

/** MIME types a host renders as a component: the MCP Apps one and the compatibility one. */
export const UI_MIME_TYPES = ['text/html;profile=mcp-app', 'text/html+skybridge'];
const FILE_PROPS = ['download_url', 'file_id', 'mime_type', 'file_name'];
const REQUIRED_ANNOTATIONS = ['readOnlyHint', 'destructiveHint', 'openWorldHint'];
const CSP_FIELDS = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'];
const LEGACY_CSP_FIELDS = ['connect_domains', 'resource_domains', 'frame_domains', 'redirect_domains'];

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
const metaPath = (base: string, key: string) => child(child(base, '_meta'), key);

/** The UI template URI of a tool: `_meta.ui.resourceUri`, else `<vendor>/outputTemplate`, else the deprecated flat key. */
export function templateUri(tool: ToolDescriptor, vendor: string): string | undefined {
  const m = isObj(tool._meta) ? tool._meta : {};
  const links: unknown[] = [isObj(m.ui) ? m.ui.resourceUri : undefined, m[`${vendor}/outputTemplate`], m['ui/resourceUri']];
  return links.find((x): x is string => typeof x === 'string');
}

/** Lints every tool descriptor, the UI templates they name, and the sample results, against the spec. */
export function lintDescriptors(input: LintInput, opts: LintOptions): Finding[] {
  const out: Finding[] = [];
  const names = new Map<string, number>();
  input.tools.forEach((tool, i) => {
    const base = `$.tools[${i}]`;
    if (typeof tool.name === 'string') {
      if (names.has(tool.name))
        push(
          out,
          'error',
          'tool.name.unique',
          child(base, 'name'),
          `tool name '${tool.name}' is already used by $.tools[${names.get(tool.name)}]`,
        );
      names.set(tool.name, i);
    }
    lintTool(out, tool, base, opts);
  });
  lintTemplates(out, input, opts);
  lintSamples(out, input);
  return out;
}

function push(out: Finding[], severity: Finding['severity'], rule: string, path: string, message: string) {
  out.push({ severity, rule, path, message });
}

function lintTool(out: Finding[], tool: ToolDescriptor, base: string, opts: LintOptions) {
  const v = opts.vendor;
  const label = typeof tool.name === 'string' ? `tool '${tool.name}'` : 'this tool';
  if (typeof tool.name !== 'string' || !tool.name.trim())
    push(out, 'error', 'tool.name', child(base, 'name'), 'the tool needs a non-blank string name');
  for (const key of ['title', 'description'] as const) {
    if (tool[key] !== undefined && typeof tool[key] !== 'string')
      push(out, 'error', `tool.${key}`, child(base, key), `${key} must be a string`);
  }
  if (tool.description === undefined)
    push(
      out,
      'warning',
      'tool.description',
      child(base, 'description'),
      `${label} has no description; the model picks tools by their description`,
    );
  if (!isObj(tool.inputSchema) || tool.inputSchema.type !== 'object') {
    push(out, 'error', 'tool.inputSchema', child(base, 'inputSchema'), 'inputSchema must be a JSON Schema object with "type": "object"');
  } else if (compileSchema(tool.inputSchema).error) {
    push(
      out,
      'error',
      'tool.inputSchema',
      child(base, 'inputSchema'),
      `inputSchema does not compile: ${compileSchema(tool.inputSchema).error}`,
    );
  }
  if (tool.outputSchema !== undefined) {
    if (!isObj(tool.outputSchema) || tool.outputSchema.type !== 'object') {
      push(
        out,
        'error',
        'outputSchema.shape',
        child(base, 'outputSchema'),
        'outputSchema must be a JSON Schema object with "type": "object" (structuredContent is an object)',
      );
    } else {
      const c = compileSchema(tool.outputSchema);
      if (c.error) push(out, 'error', 'outputSchema.shape', child(base, 'outputSchema'), `outputSchema does not compile: ${c.error}`);
    }
  }

  // Annotations: the three hints are required booleans; idempotentHint is an optional boolean.
  const ann = tool.annotations;
  const annPath = child(base, 'annotations');
  if (!isObj(ann)) {
    push(
      out,
      'error',
      'annotations.required',
      annPath,
      `${label} must declare annotations with readOnlyHint, destructiveHint and openWorldHint (booleans)`,
    );
  } else {
    for (const key of REQUIRED_ANNOTATIONS) {
      if (ann[key] === undefined) push(out, 'error', 'annotations.required', child(annPath, key), `${key} is required (true or false)`);
      else if (typeof ann[key] !== 'boolean')
        push(out, 'error', 'annotations.type', child(annPath, key), `${key} must be a boolean, got ${JSON.stringify(ann[key])}`);
    }
    if (ann.idempotentHint !== undefined && typeof ann.idempotentHint !== 'boolean')
      push(out, 'error', 'annotations.type', child(annPath, 'idempotentHint'), 'idempotentHint must be a boolean when present');
    if (ann.readOnlyHint === true && ann.destructiveHint === true)
      push(
        out,
        'warning',
        'annotations.consistent',
        annPath,
        'a read-only tool cannot also be destructive: readOnlyHint and destructiveHint are both true',
      );
  }

  // securitySchemes and their mirror in _meta.
  const meta = tool._meta;
  if (meta !== undefined && !isObj(meta)) {
    push(out, 'error', 'meta.shape', child(base, '_meta'), '_meta must be an object');
    return;
  }
  const top = tool.securitySchemes;
  const mirrored = meta?.securitySchemes;
  if (top !== undefined) checkSchemes(out, top, child(base, 'securitySchemes'));
  if (mirrored !== undefined) checkSchemes(out, mirrored, metaPath(base, 'securitySchemes'));
  if (top !== undefined && mirrored === undefined)
    push(
      out,
      'error',
      'securitySchemes.mirror',
      metaPath(base, 'securitySchemes'),
      'securitySchemes must be mirrored in _meta.securitySchemes for clients that read only _meta',
    );
  else if (top !== undefined && mirrored !== undefined && !sameJson(top, mirrored))
    push(
      out,
      'error',
      'securitySchemes.mirror',
      metaPath(base, 'securitySchemes'),
      '_meta.securitySchemes differs from securitySchemes; they must be the same',
    );
  else if (top === undefined && mirrored !== undefined)
    push(
      out,
      'warning',
      'securitySchemes.mirror',
      child(base, 'securitySchemes'),
      'securitySchemes is only in _meta; declare it on the descriptor too',
    );

  if (!meta) return;
  // UI template link and its alias.
  const ui = meta.ui;
  if (ui !== undefined && !isObj(ui)) push(out, 'error', 'ui.shape', metaPath(base, 'ui'), '_meta.ui must be an object');
  const uri = isObj(ui) ? ui.resourceUri : undefined;
  const alias = meta[`${v}/outputTemplate`];
  if (uri !== undefined) checkTemplateUri(out, uri, child(metaPath(base, 'ui'), 'resourceUri'));
  if (alias !== undefined) checkTemplateUri(out, alias, metaPath(base, `${v}/outputTemplate`));
  if (uri !== undefined && alias !== undefined && uri !== alias)
    push(
      out,
      'error',
      'ui.resourceUri.alias',
      metaPath(base, `${v}/outputTemplate`),
      `${v}/outputTemplate (${JSON.stringify(alias)}) differs from ui.resourceUri (${JSON.stringify(uri)}); the alias must name the same template`,
    );
  if (uri === undefined && alias !== undefined)
    push(
      out,
      'warning',
      'ui.resourceUri.alias',
      child(metaPath(base, 'ui'), 'resourceUri'),
      `only the compatibility alias ${v}/outputTemplate is set; set _meta.ui.resourceUri (the MCP Apps key) too`,
    );
  // The flat key is deprecated as the only link; beside an equal ui.resourceUri it is the copy the ext-apps SDK
  // helper (registerAppTool) adds for older hosts, which the spec allows.
  const flat = meta['ui/resourceUri'];
  const flatPath = metaPath(base, 'ui/resourceUri');
  if (flat !== undefined && uri === undefined)
    push(
      out,
      'warning',
      'ui.resourceUri.deprecated',
      flatPath,
      'the flat _meta["ui/resourceUri"] key is deprecated and will be removed before GA; set _meta.ui.resourceUri',
    );
  else if (flat !== undefined && flat !== uri)
    push(
      out,
      'warning',
      'ui.resourceUri.alias',
      flatPath,
      `_meta["ui/resourceUri"] (${JSON.stringify(flat)}) differs from ui.resourceUri (${JSON.stringify(uri)}); hosts that read only the flat key render another template`,
    );

  // Visibility and its two compatibility fields.
  const vis = isObj(ui) ? ui.visibility : undefined;
  const visPath = child(metaPath(base, 'ui'), 'visibility');
  if (vis !== undefined) {
    if (!Array.isArray(vis) || vis.some((x) => x !== 'model' && x !== 'app'))
      push(out, 'error', 'visibility.values', visPath, 'ui.visibility must be an array of "model" and/or "app"');
    else if (vis.length === 0)
      push(out, 'warning', 'visibility.values', visPath, 'ui.visibility is empty: neither the model nor the app can call this tool');
    else if (new Set(vis).size !== vis.length) push(out, 'warning', 'visibility.values', visPath, 'ui.visibility lists a value twice');
  }
  const legacyVis = meta[`${v}/visibility`];
  if (legacyVis !== undefined && legacyVis !== 'public' && legacyVis !== 'private')
    push(
      out,
      'error',
      'visibility.values',
      metaPath(base, `${v}/visibility`),
      `${v}/visibility must be "public" or "private", got ${JSON.stringify(legacyVis)}`,
    );
  const accessible = meta[`${v}/widgetAccessible`];
  if (accessible !== undefined && typeof accessible !== 'boolean')
    push(out, 'error', 'visibility.values', metaPath(base, `${v}/widgetAccessible`), `${v}/widgetAccessible must be a boolean`);
  if (Array.isArray(vis) && vis.every((x) => x === 'model' || x === 'app')) {
    if (legacyVis === 'private' && vis.includes('model'))
      push(
        out,
        'warning',
        'visibility.alias',
        metaPath(base, `${v}/visibility`),
        `${v}/visibility is "private" but ui.visibility includes "model"; ui.visibility wins`,
      );
    if (legacyVis === 'public' && !vis.includes('model'))
      push(
        out,
        'warning',
        'visibility.alias',
        metaPath(base, `${v}/visibility`),
        `${v}/visibility is "public" but ui.visibility leaves out "model"; ui.visibility wins`,
      );
    if (accessible === true && !vis.includes('app'))
      push(
        out,
        'warning',
        'visibility.alias',
        metaPath(base, `${v}/widgetAccessible`),
        `${v}/widgetAccessible is true but ui.visibility leaves out "app"; ui.visibility wins`,
      );
    if (accessible === false && vis.includes('app') && isObj(ui) && ui.visibility !== undefined)
      push(
        out,
        'warning',
        'visibility.alias',
        metaPath(base, `${v}/widgetAccessible`),
        `${v}/widgetAccessible is false but ui.visibility includes "app"; ui.visibility wins`,
      );
  }

  // Status texts.
  for (const key of ['invoking', 'invoked']) {
    const k = `${v}/toolInvocation/${key}`;
    const s = meta[k];
    if (s === undefined) continue;
    if (typeof s !== 'string') push(out, 'error', 'toolInvocation.type', metaPath(base, k), `${k} must be a string`);
    else if ([...s].length > 64)
      push(out, 'error', 'toolInvocation.length', metaPath(base, k), `${k} is ${[...s].length} characters; at most 64 are allowed`);
  }

  // Profile tool: only `true`, only on an authenticated read-only tool.
  const profile = meta[`${v}/profile`];
  const pPath = metaPath(base, `${v}/profile`);
  if (profile !== undefined) {
    if (profile !== true)
      push(out, 'error', 'profile.value', pPath, `${v}/profile may only be true (omit it otherwise), got ${JSON.stringify(profile)}`);
    else {
      if (!isObj(ann) || ann.readOnlyHint !== true)
        push(
          out,
          'error',
          'profile.readOnly',
          pPath,
          `${v}/profile marks the tool returning the current profile: it must have readOnlyHint true`,
        );
      const schemes = Array.isArray(top) ? top : Array.isArray(mirrored) ? mirrored : [];
      const oauth = schemes.some((s: any) => s?.type === 'oauth2');
      const noauth = schemes.some((s: any) => s?.type === 'noauth');
      if (!oauth || noauth)
        push(
          out,
          'error',
          'profile.authenticated',
          pPath,
          `${v}/profile needs an authenticated tool: securitySchemes must contain oauth2 and not noauth`,
        );
    }
  }

  // File inputs.
  const fileParams = meta[`${v}/fileParams`];
  if (fileParams !== undefined) checkFileParams(out, tool, fileParams, base, v);

  // Host keys this host does not know are likely typos.
  for (const key of Object.keys(meta)) {
    if (key.startsWith(`${v}/`) && !KNOWN_TOOL_KEYS.includes(key.slice(v.length + 1)))
      push(
        out,
        'warning',
        'meta.unknownKey',
        metaPath(base, key),
        `unknown key ${key}; known host keys are ${KNOWN_TOOL_KEYS.map((k) => `${v}/${k}`).join(', ')}`,
      );
  }
}

const KNOWN_TOOL_KEYS = [
  'outputTemplate',
  'profile',
  'widgetAccessible',
  'visibility',
  'toolInvocation/invoking',
  'toolInvocation/invoked',
  'fileParams',
  'resultCanProduceWidget',
  'widgetDescription',
  'widgetCSP',
  'widgetDomain',
  'widgetPrefersBorder',
];

function checkSchemes(out: Finding[], schemes: unknown, path: string) {
  if (!Array.isArray(schemes))
    return push(
      out,
      'error',
      'securitySchemes.shape',
      path,
      'securitySchemes must be an array of {type: "noauth"} or {type: "oauth2", scopes: [...]}',
    );
  if (schemes.length === 0) push(out, 'warning', 'securitySchemes.shape', path, 'securitySchemes is empty; declare noauth, oauth2 or both');
  schemes.forEach((s, i) => {
    const p = child(path, i);
    if (!isObj(s)) return push(out, 'error', 'securitySchemes.shape', p, 'each security scheme must be an object');
    if (s.type === 'noauth') return;
    if (s.type === 'oauth2') {
      if (s.scopes !== undefined && (!Array.isArray(s.scopes) || s.scopes.some((x: unknown) => typeof x !== 'string')))
        push(out, 'error', 'securitySchemes.shape', child(p, 'scopes'), 'scopes must be an array of strings');
      if (s.scopes === undefined)
        push(
          out,
          'warning',
          'securitySchemes.shape',
          child(p, 'scopes'),
          'an oauth2 scheme should list its scopes (an empty array when none)',
        );
      return;
    }
    push(out, 'error', 'securitySchemes.shape', child(p, 'type'), `type must be "noauth" or "oauth2", got ${JSON.stringify(s.type)}`);
  });
}

function checkTemplateUri(out: Finding[], uri: unknown, path: string) {
  if (typeof uri !== 'string' || !/^[a-z][a-z0-9+.-]*:/i.test(uri))
    return push(out, 'error', 'ui.resourceUri.shape', path, `the template link must be a URI string, got ${JSON.stringify(uri)}`);
  if (!uri.startsWith('ui://'))
    push(out, 'warning', 'ui.resourceUri.scheme', path, `UI template URIs should use the ui:// scheme (MCP Apps), got ${uri}`);
}

function checkFileParams(out: Finding[], tool: ToolDescriptor, fileParams: unknown, base: string, v: string) {
  const path = metaPath(base, `${v}/fileParams`);
  if (!Array.isArray(fileParams) || fileParams.some((x) => typeof x !== 'string'))
    return push(out, 'error', 'fileParams.shape', path, `${v}/fileParams must be an array of top-level input field names`);
  const props = isObj(tool.inputSchema?.properties) ? tool.inputSchema.properties : {};
  fileParams.forEach((name: string, i: number) => {
    const fieldPath = child(child(child(base, 'inputSchema'), 'properties'), name);
    const schema = props[name];
    if (!isObj(schema))
      return push(
        out,
        'error',
        'fileParams.field',
        child(path, i),
        `'${name}' is listed as a file input but inputSchema.properties has no '${name}'`,
      );
    // A field is one file object or an array of file objects.
    const isArray = schema.type === 'array';
    const obj = isArray ? schema.items : schema;
    const objPath = isArray ? child(fieldPath, 'items') : fieldPath;
    if (!isObj(obj) || (obj.type !== undefined && obj.type !== 'object'))
      return push(
        out,
        'error',
        'fileParams.fileObject',
        objPath,
        `'${name}' must be a file object schema (type object) or an array of them`,
      );
    const declared = isObj(obj.properties) ? obj.properties : {};
    const required: unknown[] = Array.isArray(obj.required) ? obj.required : [];
    const missing = FILE_PROPS.filter((p) => !isObj(declared[p]));
    if (missing.length)
      push(
        out,
        'error',
        'fileParams.declared',
        child(objPath, 'properties'),
        `the file object must declare all four properties download_url, file_id, mime_type, file_name; missing ${missing.join(', ')}`,
      );
    for (const p of FILE_PROPS)
      if (isObj(declared[p]) && declared[p].type !== undefined && declared[p].type !== 'string')
        push(out, 'error', 'fileParams.declared', child(child(objPath, 'properties'), p), `${p} must be of type string`);
    const notRequired = ['download_url', 'file_id'].filter((p) => !required.includes(p));
    if (notRequired.length)
      push(
        out,
        'error',
        'fileParams.required',
        child(objPath, 'required'),
        `the file object must require download_url and file_id; not required: ${notRequired.join(', ')}`,
      );
    for (const p of ['mime_type', 'file_name'])
      if (required.includes(p))
        push(out, 'error', 'fileParams.optional', child(objPath, 'required'), `${p} must not be required: the host may omit it`);
    for (const p of required)
      if (typeof p === 'string' && !FILE_PROPS.includes(p))
        push(
          out,
          'error',
          'fileParams.extraRequired',
          child(objPath, 'required'),
          `'${p}' must not be required: extra file object properties may be declared but only as optional`,
        );
  });
}

// ---------------------------------------------------------------------------------------------- templates

function lintTemplates(out: Finding[], input: LintInput, opts: LintOptions) {
  const v = opts.vendor;
  const sev = opts.submission ? 'error' : 'warning';
  const seen = new Set<string>();
  input.tools.forEach((tool, i) => {
    const uri = templateUri(tool, v);
    if (!uri || seen.has(uri)) return;
    seen.add(uri);
    const read = input.resources?.[uri];
    const base = `$.resources[${JSON.stringify(uri)}]`;
    if (!read) return;
    if (read.error || !read.contents?.length)
      return push(
        out,
        'error',
        'template.exists',
        `$.tools[${i}]._meta.ui.resourceUri`,
        `the UI template ${uri} could not be read: ${read.error ?? 'no contents'}`,
      );
    const c = read.contents[0];
    const p = `${base}.contents[0]`;
    if (!UI_MIME_TYPES.includes(String(c.mimeType ?? '').replace(/\s+/g, '')))
      push(
        out,
        'error',
        'template.mimeType',
        child(p, 'mimeType'),
        `a UI template's mimeType must be ${UI_MIME_TYPES.join(' or ')}, got ${JSON.stringify(c.mimeType)}`,
      );
    if (typeof c.text !== 'string' && typeof c.blob !== 'string')
      push(out, 'error', 'template.content', p, 'a UI template needs its HTML in text or blob');
    const rmeta = isObj(c._meta) ? c._meta : {};
    lintResourceMeta(out, rmeta, child(p, '_meta'), v, sev);
  });
}

/** Lints the `_meta` of a UI template: ui.csp / widgetCSP, ui.domain / widgetDomain, prefersBorder and their aliases. */
export function lintResourceMeta(out: Finding[], rmeta: Record<string, any>, path: string, v: string, sev: Finding['severity']) {
  const ui = isObj(rmeta.ui) ? rmeta.ui : {};
  const uiPath = child(path, 'ui');
  if (rmeta.ui !== undefined && !isObj(rmeta.ui)) push(out, 'error', 'ui.shape', uiPath, '_meta.ui must be an object');
  // CSP
  if (ui.csp !== undefined) {
    if (!isObj(ui.csp)) push(out, 'error', 'csp.shape', child(uiPath, 'csp'), 'ui.csp must be an object');
    else {
      for (const key of Object.keys(ui.csp)) {
        if (!CSP_FIELDS.includes(key))
          push(
            out,
            key === 'redirectDomains' || LEGACY_CSP_FIELDS.includes(key) ? 'error' : 'warning',
            'csp.field',
            child(child(uiPath, 'csp'), key),
            key === 'redirectDomains'
              ? `redirect domains exist only in the legacy ${v}/widgetCSP (redirect_domains), not in ui.csp`
              : LEGACY_CSP_FIELDS.includes(key)
                ? `ui.csp uses camelCase: ${key} belongs to ${v}/widgetCSP`
                : `unknown ui.csp field ${key}; known: ${CSP_FIELDS.join(', ')}`,
          );
        else checkDomains(out, ui.csp[key], child(child(uiPath, 'csp'), key), key, sev);
      }
      if (Array.isArray(ui.csp.frameDomains) && ui.csp.frameDomains.length)
        push(
          out,
          'warning',
          'csp.frameDomains',
          child(child(uiPath, 'csp'), 'frameDomains'),
          'frameDomains allows nested iframes: a submission needs a justification for it and may get extra review',
        );
    }
  }
  const legacy = rmeta[`${v}/widgetCSP`];
  const lPath = child(path, `${v}/widgetCSP`);
  if (legacy !== undefined) {
    if (!isObj(legacy)) push(out, 'error', 'csp.shape', lPath, `${v}/widgetCSP must be an object`);
    else {
      for (const key of Object.keys(legacy)) {
        if (!LEGACY_CSP_FIELDS.includes(key))
          push(
            out,
            CSP_FIELDS.includes(key) ? 'error' : 'warning',
            'csp.field',
            child(lPath, key),
            CSP_FIELDS.includes(key)
              ? `${v}/widgetCSP uses snake_case: ${key} belongs to ui.csp`
              : `unknown ${v}/widgetCSP field ${key}; known: ${LEGACY_CSP_FIELDS.join(', ')}`,
          );
        else checkDomains(out, legacy[key], child(lPath, key), key, sev);
      }
      if (Array.isArray(legacy.frame_domains) && legacy.frame_domains.length)
        push(
          out,
          'warning',
          'csp.frameDomains',
          child(lPath, 'frame_domains'),
          'frame_domains allows nested iframes: a submission needs a justification for it and may get extra review',
        );
      if (isObj(ui.csp)) {
        for (const [camel, snake] of [
          ['connectDomains', 'connect_domains'],
          ['resourceDomains', 'resource_domains'],
          ['frameDomains', 'frame_domains'],
        ]) {
          if (ui.csp[camel] !== undefined && legacy[snake] !== undefined && !sameJson([...ui.csp[camel]].sort(), [...legacy[snake]].sort()))
            push(out, 'warning', 'csp.alias', child(lPath, snake), `${snake} differs from ui.csp.${camel}; ui.csp wins`);
        }
      } else
        push(out, 'warning', 'csp.legacy', lPath, `${v}/widgetCSP is the legacy key; declare ui.csp (connectDomains, resourceDomains) too`);
    }
  }
  // Domain
  const domain = ui.domain;
  const lDomain = rmeta[`${v}/widgetDomain`];
  if (domain !== undefined) checkOrigin(out, domain, child(uiPath, 'domain'), 'ui.domain');
  if (lDomain !== undefined) checkOrigin(out, lDomain, child(path, `${v}/widgetDomain`), `${v}/widgetDomain`);
  if (domain !== undefined && lDomain !== undefined && domain !== lDomain)
    push(out, 'warning', 'domain.alias', child(path, `${v}/widgetDomain`), `${v}/widgetDomain differs from ui.domain; ui.domain wins`);
  if (domain === undefined && lDomain === undefined)
    push(
      out,
      sev,
      'domain.required',
      child(uiPath, 'domain'),
      'ui.domain (the dedicated origin of the component, unique per app) is required to submit an app with UI',
    );
  // Border
  if (ui.prefersBorder !== undefined && typeof ui.prefersBorder !== 'boolean')
    push(out, 'error', 'prefersBorder.type', child(uiPath, 'prefersBorder'), 'ui.prefersBorder must be a boolean');
  const lBorder = rmeta[`${v}/widgetPrefersBorder`];
  if (lBorder !== undefined && typeof lBorder !== 'boolean')
    push(out, 'error', 'prefersBorder.type', child(path, `${v}/widgetPrefersBorder`), `${v}/widgetPrefersBorder must be a boolean`);
  if (typeof ui.prefersBorder === 'boolean' && typeof lBorder === 'boolean' && ui.prefersBorder !== lBorder)
    push(
      out,
      'warning',
      'prefersBorder.alias',
      child(path, `${v}/widgetPrefersBorder`),
      `${v}/widgetPrefersBorder differs from ui.prefersBorder; ui.prefersBorder wins`,
    );
  const desc = rmeta[`${v}/widgetDescription`];
  if (desc !== undefined && typeof desc !== 'string')
    push(out, 'error', 'widgetDescription.type', child(path, `${v}/widgetDescription`), `${v}/widgetDescription must be a string`);
}

/** CSP source expressions: `https://host[:port]` with an optional `*.` wildcard subdomain, or `wss://…`. */
function checkDomains(out: Finding[], list: unknown, path: string, field: string, sev: Finding['severity']) {
  if (!Array.isArray(list)) return push(out, 'error', 'csp.shape', path, `${field} must be an array of origins`);
  list.forEach((d, i) => {
    const p = child(path, i);
    if (typeof d !== 'string')
      return push(out, 'error', 'csp.origin', p, 'each domain must be a string origin such as https://api.example.com');
    if (/[;,\s'"]/.test(d))
      return push(
        out,
        'error',
        'csp.origin',
        p,
        `${JSON.stringify(d)} is not one origin: it contains a space, quote, comma or semicolon (which would inject CSP directives)`,
      );
    const m = /^(https?|wss?):\/\/(\*\.)?([a-z0-9-]+(\.[a-z0-9-]+)*)(:\d{1,5})?\/?$/i.exec(d);
    if (!m)
      return push(
        out,
        'error',
        'csp.origin',
        p,
        `${JSON.stringify(d)} must be an origin: scheme://host[:port], optionally *.host, with no path`,
      );
    const local = /^(localhost|127\.\d+\.\d+\.\d+)$/i.test(m[3]);
    if ((m[1] === 'http' || m[1] === 'ws') && !local)
      push(out, sev, 'csp.https', p, `${d} uses ${m[1]}: a submitted component loads only over https/wss`);
    if (local) push(out, sev, 'csp.local', p, `${d} is a local address that users' browsers cannot reach; replace it before submitting`);
  });
}

function checkOrigin(out: Finding[], value: unknown, path: string, name: string) {
  if (typeof value !== 'string')
    return push(out, 'error', 'domain.shape', path, `${name} must be a string origin such as https://myapp.example.com`);
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    /* reported below */
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.origin !== value.replace(/\/$/, ''))
    push(
      out,
      'error',
      'domain.shape',
      path,
      `${name} must be an origin (https://host, no path, query or fragment), got ${JSON.stringify(value)}`,
    );
}

// ---------------------------------------------------------------------------------------------- samples

function lintSamples(out: Finding[], input: LintInput) {
  const byName = new Map(input.tools.map((t, i) => [t.name, { tool: t, i }]));
  (input.samples ?? []).forEach((s, si) => {
    const base = `$.samples[${si}]`;
    const entry = byName.get(s.tool);
    if (!entry) return push(out, 'error', 'sample.tool', child(base, 'tool'), `no tool named '${s.tool}' on this server`);
    if (s.error)
      return push(out, 'warning', 'sample.failed', base, `sample call of '${s.tool}' failed (${s.error}); its result could not be checked`);
    const r = s.result;
    if (!isObj(r)) return push(out, 'error', 'result.shape', child(base, 'result'), 'a tool result must be an object');
    const rp = child(base, 'result');
    if (r.content !== undefined && typeof r.content !== 'string' && !Array.isArray(r.content))
      push(out, 'error', 'result.content', child(rp, 'content'), 'content must be a string or an array of content items');
    if (r._meta !== undefined && !isObj(r._meta)) push(out, 'error', 'result.meta', child(rp, '_meta'), '_meta must be an object');
    const wwwAuth = isObj(r._meta) ? r._meta['mcp/www_authenticate'] : undefined;
    if (wwwAuth !== undefined && typeof wwwAuth !== 'string' && !(Array.isArray(wwwAuth) && wwwAuth.every((x) => typeof x === 'string')))
      push(
        out,
        'error',
        'result.wwwAuthenticate',
        child(child(rp, '_meta'), 'mcp/www_authenticate'),
        'mcp/www_authenticate must be a string or an array of strings (RFC 7235 challenges)',
      );
    const tPath = `$.tools[${entry.i}]`;
    if (r.structuredContent === undefined) {
      if (entry.tool.outputSchema !== undefined && r.isError !== true)
        push(
          out,
          'error',
          'result.structuredContent.missing',
          child(rp, 'structuredContent'),
          `'${s.tool}' declares an outputSchema but its result has no structuredContent`,
        );
      return;
    }
    if (!isObj(r.structuredContent))
      return push(out, 'error', 'result.structuredContent', child(rp, 'structuredContent'), 'structuredContent must be an object');
    // The spec asks for an outputSchema but checks structuredContent against it only "when declared": a warning.
    if (entry.tool.outputSchema === undefined)
      return push(
        out,
        'warning',
        'outputSchema.missing',
        child(tPath, 'outputSchema'),
        `'${s.tool}' returns structuredContent but declares no outputSchema; declare one describing the exact returned object`,
      );
    if (!isObj(entry.tool.outputSchema) || entry.tool.outputSchema.type !== 'object') return; // reported as outputSchema.shape
    const c = compileSchema(entry.tool.outputSchema);
    if (!c.validate || c.validate(r.structuredContent)) return;
    for (const e of c.validate.errors ?? []) {
      const d = describeAjvError(child(rp, 'structuredContent'), e);
      push(out, 'error', 'outputSchema.mismatch', d.path, `${d.message} (outputSchema of '${s.tool}')`);
    }
  });
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (isObj(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical(v[k])]),
    );
  return v;
}
