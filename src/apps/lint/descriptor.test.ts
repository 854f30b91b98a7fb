import { describe, expect, it } from 'vitest';
import { lintDescriptors, type LintInput, type ToolDescriptor } from './descriptor.js';
import type { Finding } from './findings.js';

const fileObject = () => ({
  type: 'object',
  properties: {
    download_url: { type: 'string' },
    file_id: { type: 'string' },
    mime_type: { type: 'string' },
    file_name: { type: 'string' },
  },
  required: ['download_url', 'file_id'],
});

/** A descriptor that satisfies every rule; each test breaks one thing. */
function goodTool(): ToolDescriptor {
  return {
    name: 'show_board',
    title: 'Show board',
    description: 'Shows the board',
    inputSchema: {
      type: 'object',
      properties: { photo: fileObject(), pages: { type: 'array', items: fileObject() } },
      required: ['photo'],
    },
    outputSchema: {
      type: 'object',
      properties: { cards: { type: 'array', items: { type: 'string' } } },
      required: ['cards'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false, idempotentHint: true },
    securitySchemes: [{ type: 'oauth2', scopes: ['board.read'] }],
    _meta: {
      securitySchemes: [{ type: 'oauth2', scopes: ['board.read'] }],
      ui: { resourceUri: 'ui://board/main.html', visibility: ['model', 'app'] },
      'vendor/outputTemplate': 'ui://board/main.html',
      'vendor/toolInvocation/invoking': 'Loading the board',
      'vendor/toolInvocation/invoked': 'Board loaded',
      'vendor/fileParams': ['photo', 'pages'],
      'vendor/profile': true,
      'vendor/widgetAccessible': true,
      'vendor/visibility': 'public',
    },
  };
}

function goodInput(): LintInput {
  return {
    tools: [goodTool()],
    resources: {
      'ui://board/main.html': {
        contents: [
          {
            uri: 'ui://board/main.html',
            mimeType: 'text/html;profile=mcp-app',
            text: '<!doctype html><html><body>board</body></html>',
            _meta: {
              ui: {
                csp: { connectDomains: ['https://api.board.example'], resourceDomains: ['https://*.cdn.example'] },
                domain: 'https://board.example',
                prefersBorder: true,
              },
              'vendor/widgetCSP': {
                connect_domains: ['https://api.board.example'],
                resource_domains: ['https://*.cdn.example'],
                redirect_domains: ['https://board.example'],
              },
              'vendor/widgetDomain': 'https://board.example',
              'vendor/widgetPrefersBorder': true,
              'vendor/widgetDescription': 'A board of cards',
            },
          },
        ],
      },
    },
    samples: [
      {
        tool: 'show_board',
        arguments: {},
        result: {
          content: [{ type: 'text', text: '2 cards' }],
          structuredContent: { cards: ['a', 'b'] },
          _meta: { 'mcp/www_authenticate': 'Bearer realm="x"' },
        },
      },
    ],
  };
}

const lint = (input: LintInput, submission = true) => lintDescriptors(input, { vendor: 'vendor', submission });
const rules = (fs: Finding[]) => fs.map((f) => `${f.severity}:${f.rule}@${f.path}`);
function withTool(mut: (t: ToolDescriptor) => void): LintInput {
  const input = goodInput();
  mut(input.tools[0]);
  return input;
}
function withResourceMeta(mut: (m: Record<string, any>) => void): LintInput {
  const input = goodInput();
  mut(input.resources!['ui://board/main.html'].contents![0]._meta!);
  return input;
}
function expectOnly(fs: Finding[], rule: string, severity: 'error' | 'warning' = 'error') {
  expect(fs.length, JSON.stringify(fs, null, 1)).toBeGreaterThan(0);
  for (const f of fs) expect(`${f.severity}:${f.rule}`, JSON.stringify(fs, null, 1)).toBe(`${severity}:${rule}`);
  for (const f of fs) expect(f.message.length).toBeGreaterThan(10);
}

describe('descriptor lint', () => {
  it('finds nothing in a descriptor that follows every rule', () => {
    expect(lint(goodInput())).toEqual([]);
  });

  describe('annotations', () => {
    for (const key of ['readOnlyHint', 'destructiveHint', 'openWorldHint']) {
      it(`requires ${key}`, () => {
        const fs = lint(withTool((t) => delete t.annotations![key]));
        expectOnly(
          fs.filter((f) => f.rule.startsWith('annotations')),
          'annotations.required',
        );
        expect(fs.find((f) => f.rule === 'annotations.required')!.path).toBe(`$.tools[0].annotations.${key}`);
      });
    }
    it('requires the annotations object', () => {
      expect(rules(lint(withTool((t) => delete t.annotations))).filter((r) => r.includes('annotations'))).toEqual([
        'error:annotations.required@$.tools[0].annotations',
      ]);
    });
    it('refuses non-boolean hints', () => {
      expectOnly(lint(withTool((t) => ((t.annotations as any).openWorldHint = 'no'))), 'annotations.type');
      expectOnly(lint(withTool((t) => ((t.annotations as any).idempotentHint = 1))), 'annotations.type');
    });
    it('warns on read-only and destructive at once', () => {
      const fs = lint(withTool((t) => ((t.annotations as any).destructiveHint = true)));
      expectOnly(fs, 'annotations.consistent', 'warning');
    });
  });

  describe('outputSchema', () => {
    it('is asked for, as a warning, when a sample returns structuredContent (the spec checks it only when declared)', () => {
      const fs = lint(withTool((t) => delete t.outputSchema));
      expectOnly(fs, 'outputSchema.missing', 'warning');
      expect(fs[0].path).toBe('$.tools[0].outputSchema');
    });
    it('must match what the sample returns, with the path of the mismatch', () => {
      const input = goodInput();
      input.samples![0].result.structuredContent = { cards: ['a', 2], extra: true };
      const fs = lint(input);
      expectOnly(fs, 'outputSchema.mismatch');
      expect(fs.map((f) => f.path).sort()).toEqual([
        '$.samples[0].result.structuredContent',
        '$.samples[0].result.structuredContent.cards[1]',
      ]);
    });
    it('must be an object schema that compiles', () => {
      expectOnly(lint(withTool((t) => (t.outputSchema = { type: 'array' }))), 'outputSchema.shape');
      expectOnly(lint(withTool((t) => (t.outputSchema = { type: 'object', properties: { a: { $ref: '#/nope' } } }))), 'outputSchema.shape');
    });
    it('reads draft-07 schemas (what zod-to-json-schema emits)', () => {
      const fs = lint(
        withTool(
          (t) =>
            (t.outputSchema = {
              $schema: 'http://json-schema.org/draft-07/schema#',
              type: 'object',
              properties: { cards: { type: 'array' } },
              required: ['cards'],
            }),
        ),
      );
      expect(fs).toEqual([]);
    });
    it('flags a result without structuredContent when an outputSchema is declared', () => {
      const input = goodInput();
      delete input.samples![0].result.structuredContent;
      expectOnly(lint(input), 'result.structuredContent.missing');
    });
    it('checks mcp/www_authenticate and content shapes of results', () => {
      const input = goodInput();
      input.samples![0].result._meta['mcp/www_authenticate'] = 42;
      input.samples![0].result.content = 5;
      expect(rules(lint(input)).sort()).toEqual([
        'error:result.content@$.samples[0].result.content',
        'error:result.wwwAuthenticate@$.samples[0].result._meta["mcp/www_authenticate"]',
      ]);
    });
  });

  describe('file inputs (Errors §2)', () => {
    const photo = (t: ToolDescriptor) => t.inputSchema.properties.photo;
    it('needs all four properties declared', () => {
      const fs = lint(withTool((t) => delete photo(t).properties.mime_type));
      expectOnly(fs, 'fileParams.declared');
      expect(fs[0].message).toContain('mime_type');
    });
    it('needs download_url and file_id required', () => {
      expectOnly(lint(withTool((t) => (photo(t).required = ['file_id']))), 'fileParams.required');
    });
    it('refuses mime_type or file_name required', () => {
      expectOnly(lint(withTool((t) => (photo(t).required = ['download_url', 'file_id', 'file_name']))), 'fileParams.optional');
    });
    it('refuses any other required property, but allows extra optional ones', () => {
      expectOnly(
        lint(withTool((t) => ((photo(t).properties.size = { type: 'number' }), (photo(t).required = ['download_url', 'file_id', 'size'])))),
        'fileParams.extraRequired',
      );
      expect(lint(withTool((t) => (photo(t).properties.size = { type: 'number' })))).toEqual([]);
    });
    it('checks arrays of file objects through items', () => {
      const fs = lint(withTool((t) => (t.inputSchema.properties.pages.items.required = ['download_url'])));
      expectOnly(fs, 'fileParams.required');
      expect(fs[0].path).toBe('$.tools[0].inputSchema.properties.pages.items.required');
    });
    it('needs the listed field to exist and be an object', () => {
      expectOnly(lint(withTool((t) => t._meta!['vendor/fileParams'].push('missing'))), 'fileParams.field');
      expectOnly(lint(withTool((t) => (t.inputSchema.properties.photo = { type: 'string' }))), 'fileParams.fileObject');
      expectOnly(lint(withTool((t) => (t._meta!['vendor/fileParams'] = 'photo'))), 'fileParams.shape');
    });
  });

  describe('status texts', () => {
    it('allows exactly 64 characters and refuses 65', () => {
      expect(lint(withTool((t) => (t._meta!['vendor/toolInvocation/invoking'] = 'x'.repeat(64))))).toEqual([]);
      const fs = lint(withTool((t) => (t._meta!['vendor/toolInvocation/invoked'] = 'x'.repeat(65))));
      expectOnly(fs, 'toolInvocation.length');
      expect(fs[0].path).toBe('$.tools[0]._meta["vendor/toolInvocation/invoked"]');
    });
    it('refuses a non-string', () => {
      expectOnly(lint(withTool((t) => (t._meta!['vendor/toolInvocation/invoking'] = 3))), 'toolInvocation.type');
    });
  });

  describe('securitySchemes', () => {
    it('must be mirrored in _meta', () => {
      expectOnly(lint(withTool((t) => delete t._meta!.securitySchemes)), 'securitySchemes.mirror');
    });
    it('mirror must be equal', () => {
      expectOnly(lint(withTool((t) => (t._meta!.securitySchemes = [{ type: 'oauth2', scopes: ['other'] }]))), 'securitySchemes.mirror');
    });
    it('warns when only _meta has them', () => {
      expectOnly(lint(withTool((t) => delete t.securitySchemes)), 'securitySchemes.mirror', 'warning');
    });
    it('refuses unknown scheme types and bad scopes', () => {
      const fs = lint(
        withTool((t) => (t.securitySchemes = t._meta!.securitySchemes = [{ type: 'apiKey' }, { type: 'oauth2', scopes: 'a' }])),
      );
      expect(fs.filter((f) => f.rule === 'securitySchemes.shape').map((f) => f.path)).toContain('$.tools[0].securitySchemes[0].type');
      expect(fs.filter((f) => f.rule === 'securitySchemes.shape').map((f) => f.path)).toContain('$.tools[0].securitySchemes[1].scopes');
    });
  });

  describe('visibility', () => {
    it('accepts only model and app', () => {
      expectOnly(lint(withTool((t) => (t._meta!.ui.visibility = ['model', 'user']))), 'visibility.values');
    });
    it('accepts only public or private for the compatibility key', () => {
      expectOnly(lint(withTool((t) => (t._meta!['vendor/visibility'] = 'hidden'))), 'visibility.values');
      expectOnly(lint(withTool((t) => (t._meta!['vendor/widgetAccessible'] = 'yes'))), 'visibility.values');
    });
    it('warns when the compatibility keys contradict ui.visibility', () => {
      expectOnly(lint(withTool((t) => (t._meta!.ui.visibility = ['app']))), 'visibility.alias', 'warning');
      expectOnly(lint(withTool((t) => (t._meta!['vendor/visibility'] = 'private'))), 'visibility.alias', 'warning');
    });
  });

  describe('profile', () => {
    it('may only be true', () => {
      expectOnly(lint(withTool((t) => (t._meta!['vendor/profile'] = false))), 'profile.value');
    });
    it('must be read-only', () => {
      const fs = lint(withTool((t) => ((t.annotations as any).readOnlyHint = false)));
      expectOnly(fs, 'profile.readOnly');
    });
    it('must be authenticated', () => {
      expectOnly(
        lint(withTool((t) => (t.securitySchemes = t._meta!.securitySchemes = [{ type: 'noauth' }, { type: 'oauth2', scopes: [] }]))),
        'profile.authenticated',
      );
      expectOnly(lint(withTool((t) => (t.securitySchemes = t._meta!.securitySchemes = [{ type: 'noauth' }]))), 'profile.authenticated');
    });
  });

  describe('template link and resource metadata', () => {
    it('the alias must name the same template', () => {
      expect(rules(lint(withTool((t) => (t._meta!['vendor/outputTemplate'] = 'ui://board/other.html'))))).toContain(
        'error:ui.resourceUri.alias@$.tools[0]._meta["vendor/outputTemplate"]',
      );
    });
    it('warns when only the alias is set', () => {
      expectOnly(lint(withTool((t) => delete t._meta!.ui.resourceUri)), 'ui.resourceUri.alias', 'warning');
    });
    it('accepts the flat ui/resourceUri beside an equal ui.resourceUri (the ext-apps registerAppTool helper adds it for older hosts)', () => {
      expect(lint(withTool((t) => (t._meta!['ui/resourceUri'] = 'ui://board/main.html')))).toEqual([]);
    });
    it('warns on the flat key used alone (deprecated) or naming another template', () => {
      const alone = lint(
        withTool((t) => {
          delete t._meta!.ui.resourceUri;
          delete t._meta!['vendor/outputTemplate'];
          t._meta!['ui/resourceUri'] = 'ui://board/main.html';
        }),
      );
      expect(rules(alone)).toEqual(['warning:ui.resourceUri.deprecated@$.tools[0]._meta["ui/resourceUri"]']);
      // The template is still found through the flat key: its metadata is linted as usual.
      expect(rules(lint(withTool((t) => (t._meta!['ui/resourceUri'] = 'ui://board/old.html'))))).toEqual([
        'warning:ui.resourceUri.alias@$.tools[0]._meta["ui/resourceUri"]',
      ]);
    });
    it('reads the template a flat key alone names, like the host does', () => {
      const input = withTool((t) => {
        delete t._meta!.ui.resourceUri;
        delete t._meta!['vendor/outputTemplate'];
        t._meta!['ui/resourceUri'] = 'ui://board/main.html';
      });
      input.resources!['ui://board/main.html'].contents![0].mimeType = 'text/html';
      expect(rules(lint(input))).toContain('error:template.mimeType@$.resources["ui://board/main.html"].contents[0].mimeType');
    });
    it('reports a template that cannot be read', () => {
      const input = goodInput();
      input.resources!['ui://board/main.html'] = { error: 'Resource not found' };
      expectOnly(lint(input), 'template.exists');
    });
    it('refuses other mime types', () => {
      const input = goodInput();
      input.resources!['ui://board/main.html'].contents![0].mimeType = 'text/html';
      expectOnly(lint(input), 'template.mimeType');
      input.resources!['ui://board/main.html'].contents![0].mimeType = 'text/html+skybridge';
      expect(lint(input)).toEqual([]);
    });
    it('requires ui.domain for a submission, and only warns in development', () => {
      const input = withResourceMeta((m) => (delete m.ui.domain, delete m['vendor/widgetDomain']));
      expectOnly(lint(input), 'domain.required');
      expectOnly(lint(input, false), 'domain.required', 'warning');
    });
    it('accepts the widgetDomain alias alone', () => {
      expect(lint(withResourceMeta((m) => delete m.ui.domain))).toEqual([]);
    });
    it('refuses a domain that is not an origin', () => {
      expectOnly(lint(withResourceMeta((m) => (m.ui.domain = m['vendor/widgetDomain'] = 'https://board.example/app'))), 'domain.shape');
    });
    it('refuses malformed CSP origins, and directive injection', () => {
      const fs = lint(
        withResourceMeta((m) => (m.ui.csp.connectDomains = ['api.board.example', "https://a.example; script-src 'unsafe-eval'"])),
      );
      expect(fs.filter((f) => f.rule === 'csp.origin').map((f) => f.path)).toEqual([
        '$.resources["ui://board/main.html"].contents[0]._meta.ui.csp.connectDomains[0]',
        '$.resources["ui://board/main.html"].contents[0]._meta.ui.csp.connectDomains[1]',
      ]);
    });
    it('flags http and local origins for a submission', () => {
      const fs = lint(withResourceMeta((m) => (m.ui.csp.resourceDomains = ['http://cdn.example', 'http://localhost:3000'])));
      expect(fs.map((f) => `${f.severity}:${f.rule}`).sort()).toEqual(['error:csp.https', 'error:csp.local', 'warning:csp.alias']);
    });
    it('flags frameDomains as needing a justification', () => {
      const fs = lint(withResourceMeta((m) => ((m.ui.csp.frameDomains = ['https://www.youtube.com']), delete m['vendor/widgetCSP'])));
      expectOnly(fs, 'csp.frameDomains', 'warning');
    });
    it('puts redirect domains only in the legacy key and keeps the casing of each key', () => {
      expect(rules(lint(withResourceMeta((m) => (m.ui.csp.redirectDomains = ['https://x.example']))))).toContain(
        'error:csp.field@$.resources["ui://board/main.html"].contents[0]._meta.ui.csp.redirectDomains',
      );
      expect(rules(lint(withResourceMeta((m) => (m['vendor/widgetCSP'].connectDomains = []))))).toContain(
        'error:csp.field@$.resources["ui://board/main.html"].contents[0]._meta["vendor/widgetCSP"].connectDomains',
      );
    });
    it('checks prefersBorder types and aliases', () => {
      expectOnly(lint(withResourceMeta((m) => (m.ui.prefersBorder = 'yes'))), 'prefersBorder.type');
      expectOnly(lint(withResourceMeta((m) => (m['vendor/widgetPrefersBorder'] = false))), 'prefersBorder.alias', 'warning');
    });
  });

  it('uses the vendor setting for host keys', () => {
    const input = goodInput();
    const t = input.tools[0];
    for (const k of Object.keys(t._meta!))
      if (k.startsWith('vendor/')) ((t._meta![k.replace('vendor/', 'openai/')] = t._meta![k]), delete t._meta![k]);
    const m = input.resources!['ui://board/main.html'].contents![0]._meta!;
    for (const k of Object.keys(m)) if (k.startsWith('vendor/')) ((m[k.replace('vendor/', 'openai/')] = m[k]), delete m[k]);
    expect(lintDescriptors(input, { vendor: 'openai', submission: true })).toEqual([]);
    expect(lintDescriptors(goodInput(), { vendor: 'openai', submission: true }).some((f) => f.rule === 'meta.unknownKey')).toBe(false);
  });

  it('warns on unknown host keys (likely typos)', () => {
    expectOnly(lint(withTool((t) => (t._meta!['vendor/outputTemplat'] = 'x'))), 'meta.unknownKey', 'warning');
  });

  it('requires names, unique names and an object inputSchema', () => {
    const input = goodInput();
    input.tools.push({ ...goodTool(), inputSchema: { type: 'string' } });
    const r = rules(lint(input));
    expect(r).toContain('error:tool.name.unique@$.tools[1].name');
    expect(r).toContain('error:tool.inputSchema@$.tools[1].inputSchema');
  });

  describe('remaining rules, one test each', () => {
    it('tool.name: a name is required', () => {
      expect(rules(lint(withTool((t) => ((t as any).name = ' '))))).toContain('error:tool.name@$.tools[0].name');
    });
    it('tool.description: warns without a description', () => {
      expectOnly(lint(withTool((t) => delete t.description)), 'tool.description', 'warning');
    });
    it('tool.title: must be a string', () => {
      expectOnly(lint(withTool((t) => ((t as any).title = 5))), 'tool.title');
    });
    it('meta.shape and ui.shape: _meta and _meta.ui are objects', () => {
      expect(rules(lint(withTool((t) => ((t as any)._meta = [])))).filter((r) => r.includes('meta.shape'))).toEqual([
        'error:meta.shape@$.tools[0]._meta',
      ]);
      expect(rules(lint(withTool((t) => (t._meta!.ui = 'ui://board/main.html'))))).toContain('error:ui.shape@$.tools[0]._meta.ui');
    });
    it('ui.resourceUri.shape and .scheme: a URI, preferably ui://', () => {
      expect(rules(lint(withTool((t) => (t._meta!.ui.resourceUri = t._meta!['vendor/outputTemplate'] = 'main.html'))))).toContain(
        'error:ui.resourceUri.shape@$.tools[0]._meta.ui.resourceUri',
      );
      const input = withTool((t) => (t._meta!.ui.resourceUri = t._meta!['vendor/outputTemplate'] = 'https://board.example/main.html'));
      expect(rules(lint(input))).toContain('warning:ui.resourceUri.scheme@$.tools[0]._meta.ui.resourceUri');
    });
    it('visibility.values: warns on an empty or repeated list', () => {
      expectOnly(
        lint(
          withTool(
            (t) => ((t._meta!.ui.visibility = []), delete t._meta!['vendor/widgetAccessible'], delete t._meta!['vendor/visibility']),
          ),
        ),
        'visibility.values',
        'warning',
      );
      expectOnly(lint(withTool((t) => (t._meta!.ui.visibility = ['model', 'app', 'app']))), 'visibility.values', 'warning');
    });
    it('securitySchemes.shape: warns on an empty list and a missing scopes member', () => {
      const fs = lint(withTool((t) => (t.securitySchemes = t._meta!.securitySchemes = [{ type: 'oauth2' }])));
      expectOnly(fs, 'securitySchemes.shape', 'warning');
      expect(rules(lint(withTool((t) => (t.securitySchemes = t._meta!.securitySchemes = []))))).toContain(
        'warning:securitySchemes.shape@$.tools[0].securitySchemes',
      );
    });
    it('template.content: text or blob', () => {
      const input = goodInput();
      delete input.resources!['ui://board/main.html'].contents![0].text;
      expectOnly(lint(input), 'template.content');
      input.resources!['ui://board/main.html'].contents![0].blob = Buffer.from('<p>x</p>').toString('base64');
      expect(lint(input)).toEqual([]);
    });
    it('csp.shape and csp.field: ui.csp is an object of known arrays', () => {
      expect(rules(lint(withResourceMeta((m) => (m.ui.csp = ['https://x.example']))))).toContain(
        'error:csp.shape@$.resources["ui://board/main.html"].contents[0]._meta.ui.csp',
      );
      expect(rules(lint(withResourceMeta((m) => (m.ui.csp.connectDomains = 'https://x.example'))))).toContain(
        'error:csp.shape@$.resources["ui://board/main.html"].contents[0]._meta.ui.csp.connectDomains',
      );
      expect(rules(lint(withResourceMeta((m) => (m.ui.csp.imgDomains = []))))).toContain(
        'warning:csp.field@$.resources["ui://board/main.html"].contents[0]._meta.ui.csp.imgDomains',
      );
    });
    it('csp.legacy: only the legacy widgetCSP', () => {
      expectOnly(lint(withResourceMeta((m) => delete m.ui.csp)), 'csp.legacy', 'warning');
    });
    it('csp.alias: the legacy list differs from ui.csp', () => {
      expectOnly(
        lint(withResourceMeta((m) => (m['vendor/widgetCSP'].connect_domains = ['https://other.example']))),
        'csp.alias',
        'warning',
      );
    });
    it('domain.alias: widgetDomain differs from ui.domain', () => {
      expectOnly(lint(withResourceMeta((m) => (m['vendor/widgetDomain'] = 'https://other.example'))), 'domain.alias', 'warning');
    });
    it('widgetDescription.type: a string', () => {
      expectOnly(lint(withResourceMeta((m) => (m['vendor/widgetDescription'] = { text: 'x' }))), 'widgetDescription.type');
    });
    it('sample.tool and sample.failed', () => {
      const input = goodInput();
      input.samples!.push({ tool: 'nope', arguments: {} }, { tool: 'show_board', arguments: {}, error: 'boom' });
      expect(rules(lint(input))).toEqual(['error:sample.tool@$.samples[1].tool', 'warning:sample.failed@$.samples[2]']);
    });
    it('result.shape, result.meta and result.structuredContent: objects', () => {
      const input = goodInput();
      input.samples!.push(
        { tool: 'show_board', arguments: {}, result: 'text' },
        { tool: 'show_board', arguments: {}, result: { _meta: 1, structuredContent: [1] } },
      );
      expect(rules(lint(input)).sort()).toEqual([
        'error:result.meta@$.samples[2].result._meta',
        'error:result.shape@$.samples[1].result',
        'error:result.structuredContent@$.samples[2].result.structuredContent',
      ]);
    });
    it('an error result without structuredContent is fine even with an outputSchema', () => {
      const input = goodInput();
      input.samples![0].result = { isError: true, content: [{ type: 'text', text: 'no' }] };
      expect(lint(input)).toEqual([]);
    });
  });
});
