import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Finding } from '../lint/findings.js';
import { OPENAI_SUBMISSION_SCHEMA_URL, submissionSchemaUrl } from './schema.js';
import { validateSubmission, validateSubmissionText } from './validate.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const opts = { schemaUrl: OPENAI_SUBMISSION_SCHEMA_URL };
const good = () => JSON.parse(fixture('good.json'));
const check = (doc: unknown) => validateSubmission(doc, opts);
const at = (fs: Finding[]) => fs.map((f) => `${f.severity}:${f.rule}@${f.path}`);
function one(fs: Finding[], rule: string, path: string, severity = 'error') {
  expect(at(fs)).toEqual([`${severity}:${rule}@${path}`]);
  expect(fs[0].message).toContain(path);
}

describe('submission import file', () => {
  it('accepts the good fixture', () => {
    expect(validateSubmissionText(fixture('good.json'), opts)).toEqual([]);
  });

  it('reports every problem of the bad fixture with its JSON path', () => {
    const fs = validateSubmissionText(fixture('bad.json'), opts);
    const paths = at(fs);
    for (const expected of [
      'error:schema.const@$.$schema',
      'error:schema.type@$.schema_version',
      'error:schema.pattern@$.app_info.display_name',
      'error:schema.maxLength@$.app_info.subtitle',
      'error:schema.enum@$.app_info.category',
      'error:schema.type@$.tools.show_board.annotations.readOnlyHint',
      'error:schema.required@$.tools.show_board.annotations.openWorldHint',
      'error:schema.pattern@$.tools.show_board.justifications.read_only_justification',
      'error:schema.required@$.tools.show_board.justifications.destructive_justification',
      'error:schema.minItems@$.test_cases',
      'error:schema.required@$.test_cases[0].tools_triggered',
      'error:schema.minItems@$.negative_test_cases',
      'error:schema.required@$.negative_test_cases[0].description',
      'error:schema.pattern@$.negative_test_cases[0].user_prompt',
    ])
      expect(paths).toContain(expected);
    expect(fs.find((f) => f.path === '$.app_info.subtitle')!.message).toBe('$.app_info.subtitle must be at most 30 characters (it has 38)');
    expect(fs.find((f) => f.path === '$.app_info.display_name')!.message).toBe('$.app_info.display_name must not be blank');
  });

  describe('top level', () => {
    it('requires $schema, schema_version and tools', () => {
      for (const key of ['$schema', 'schema_version', 'tools']) {
        const d = good();
        delete d[key];
        one(check(d), 'schema.required', key === '$schema' ? '$.$schema' : `$.${key}`);
      }
    });
    it('$schema is the constant of the vendor', () => {
      const d = good();
      d.$schema = 'https://developers.openai.com/apps-sdk/schemas/chatgpt-app-submission.v2.json';
      one(check(d), 'schema.const', '$.$schema');
      expect(check(d)[0].message).toContain(OPENAI_SUBMISSION_SCHEMA_URL);
    });
    it('schema_version is the integer 1', () => {
      for (const v of [2, 1.5, '1']) {
        const d = good();
        d.schema_version = v;
        expect(check(d).every((f) => f.path === '$.schema_version')).toBe(true);
        expect(check(d).length).toBeGreaterThan(0);
      }
    });
    it('allows extra properties at every level', () => {
      const d = good();
      d.extra = 1;
      d.app_info.extra = 1;
      d.test_cases[0].extra = 1;
      d.tools.show_board.annotations.idempotentHint = true;
      d.tools.show_board.justifications.note = 'x';
      expect(check(d)).toEqual([]);
    });
    it('test_cases and negative_test_cases and app_info are optional', () => {
      const d = good();
      delete d.test_cases;
      delete d.negative_test_cases;
      delete d.app_info;
      expect(check(d)).toEqual([]);
    });
    it('refuses a document that is not an object', () => {
      one(check([]), 'schema.type', '$');
    });
  });

  describe('app_info', () => {
    it('display_name is a non-blank string', () => {
      const d = good();
      d.app_info.display_name = '\t';
      one(check(d), 'schema.pattern', '$.app_info.display_name');
    });
    it('subtitle: 30 characters pass, 31 fail', () => {
      const d = good();
      d.app_info.subtitle = 'x'.repeat(30);
      expect(check(d)).toEqual([]);
      d.app_info.subtitle = 'x'.repeat(31);
      one(check(d), 'schema.maxLength', '$.app_info.subtitle');
    });
    it('description: 4000 characters pass, 4001 fail, blank fails', () => {
      const d = good();
      d.app_info.description = 'x'.repeat(4000);
      expect(check(d)).toEqual([]);
      d.app_info.description = 'x'.repeat(4001);
      one(check(d), 'schema.maxLength', '$.app_info.description');
      d.app_info.description = ' ';
      one(check(d), 'schema.pattern', '$.app_info.description');
    });
    it('category is one of the thirteen', () => {
      const d = good();
      d.app_info.category = 'productivity';
      one(check(d), 'schema.enum', '$.app_info.category');
    });
  });

  describe('tools', () => {
    for (const hint of ['readOnlyHint', 'openWorldHint', 'destructiveHint']) {
      it(`annotations.${hint} is a required boolean`, () => {
        const d = good();
        delete d.tools.show_board.annotations[hint];
        one(check(d), 'schema.required', `$.tools.show_board.annotations.${hint}`);
        d.tools.show_board.annotations[hint] = 'false';
        one(check(d), 'schema.type', `$.tools.show_board.annotations.${hint}`);
      });
    }
    for (const j of ['read_only_justification', 'open_world_justification', 'destructive_justification']) {
      it(`justifications.${j} is a required non-blank string`, () => {
        const d = good();
        delete d.tools.delete_card.justifications[j];
        one(check(d), 'schema.required', `$.tools.delete_card.justifications.${j}`);
        d.tools.delete_card.justifications[j] = '  ';
        one(check(d), 'schema.pattern', `$.tools.delete_card.justifications.${j}`);
      });
    }
    it('annotations and justifications are required', () => {
      const d = good();
      delete d.tools.show_board.annotations;
      delete d.tools.show_board.justifications;
      expect(at(check(d)).sort()).toEqual([
        'error:schema.required@$.tools.show_board.annotations',
        'error:schema.required@$.tools.show_board.justifications',
      ]);
    });
    it('names tools with odd characters by bracket path', () => {
      const d = good();
      d.tools['my tool'] = d.tools.show_board;
      delete d.tools['my tool'].annotations.readOnlyHint;
      d.test_cases.forEach((t: any) => (t.tools_triggered = 'delete_card'));
      expect(at(check(d))).toContain('error:schema.required@$.tools["my tool"].annotations.readOnlyHint');
    });
    it('(beyond the schema) refuses an empty tools map and a read-only destructive tool', () => {
      const d = good();
      d.tools.show_board.annotations.destructiveHint = true;
      one(check(d), 'tools.annotations.consistent', '$.tools.show_board.annotations');
      const e = good();
      e.tools = {};
      delete e.test_cases;
      delete e.negative_test_cases;
      one(check(e), 'tools.empty', '$.tools');
    });
  });

  describe('test cases', () => {
    it('needs at least 5 test cases and 3 negative ones', () => {
      const d = good();
      d.test_cases.pop();
      one(check(d), 'schema.minItems', '$.test_cases');
      const e = good();
      e.negative_test_cases.pop();
      one(check(e), 'schema.minItems', '$.negative_test_cases');
    });
    for (const key of ['description', 'user_prompt', 'tools_triggered']) {
      it(`a test case requires a non-blank ${key}`, () => {
        const d = good();
        delete d.test_cases[2][key];
        one(check(d), 'schema.required', `$.test_cases[2].${key}`);
        d.test_cases[2][key] = '';
        one(check(d), 'schema.pattern', `$.test_cases[2].${key}`);
      });
    }
    it('test case description is at most 4000 characters', () => {
      const d = good();
      d.test_cases[0].description = 'x'.repeat(4001);
      one(check(d), 'schema.maxLength', '$.test_cases[0].description');
      const e = good();
      e.negative_test_cases[0].description = 'x'.repeat(4001);
      one(check(e), 'schema.maxLength', '$.negative_test_cases[0].description');
    });
    it('optional fields are a string or null, attachments a string array or null', () => {
      for (const [field, bad] of [
        ['expected_output', 3],
        ['expected_output_url', false],
        ['file_attachment_urls', 'https://x.example/a'],
        ['file_attachment_urls', [1]],
      ] as const) {
        const d = good();
        d.test_cases[1][field] = bad;
        expect(at(check(d))[0]).toMatch(new RegExp(`^error:schema.type@\\$\\.test_cases\\[1\\]\\.${field}`));
      }
    });
    for (const key of ['description', 'user_prompt']) {
      it(`a negative test case requires a non-blank ${key}`, () => {
        const d = good();
        delete d.negative_test_cases[1][key];
        one(check(d), 'schema.required', `$.negative_test_cases[1].${key}`);
      });
    }
    it('a negative test case may leave tools_triggered null, but not a number', () => {
      const d = good();
      d.negative_test_cases[0].tools_triggered = null;
      expect(check(d)).toEqual([]);
      d.negative_test_cases[0].tools_triggered = 1;
      one(check(d), 'schema.type', '$.negative_test_cases[0].tools_triggered');
    });
    it('(beyond the schema) tools_triggered names tools of the file', () => {
      const d = good();
      d.test_cases[4].tools_triggered = 'delete_card, archive_card';
      one(check(d), 'testCases.toolsTriggered', '$.test_cases[4].tools_triggered', 'warning');
    });
    it('(beyond the schema) URLs are absolute http(s) URLs', () => {
      const d = good();
      d.test_cases[3].file_attachment_urls = ['whiteboard.jpg'];
      one(check(d), 'testCases.url', '$.test_cases[3].file_attachment_urls[0]');
    });
    it('(beyond the schema) warns on a repeated prompt', () => {
      const d = good();
      d.test_cases[1].user_prompt = 'show my board';
      one(check(d), 'testCases.duplicate', '$.test_cases[1].user_prompt', 'warning');
    });
  });

  describe('JSON text', () => {
    it('reports a syntax error with line and column', () => {
      const fs = validateSubmissionText('{\n  "schema_version": 1,\n  "tools": {,}\n}', opts);
      expect(fs).toHaveLength(1);
      expect(fs[0].rule).toBe('json.syntax');
      expect(fs[0].message).toContain('line 3, column 13');
    });
    it('(beyond the schema) reports duplicate keys, which JSON.parse would hide', () => {
      const text = fixture('good.json').replace('"schema_version": 1,', '"schema_version": 1,\n  "schema_version": 1,');
      one(validateSubmissionText(text, opts), 'json.duplicateKey', '$.schema_version');
    });
  });

  describe('against the live server', () => {
    const live = [
      { name: 'show_board', annotations: { readOnlyHint: true, openWorldHint: false, destructiveHint: false } },
      { name: 'delete_card', annotations: { readOnlyHint: false, openWorldHint: false, destructiveHint: true } },
    ];
    it('matches', () => expect(validateSubmission(good(), { ...opts, descriptors: live })).toEqual([]));
    it('reports annotations that differ, tools the server lacks and tools the file lacks', () => {
      const d = good();
      d.tools.show_board.annotations.openWorldHint = true;
      const fs = validateSubmission(d, { ...opts, descriptors: [...live, { name: 'move_card', annotations: {} }] });
      expect(at(fs).sort()).toEqual([
        'error:server.annotationMismatch@$.tools.show_board.annotations.openWorldHint',
        'error:server.missingTool@$.tools.move_card',
      ]);
      const e = good();
      const fs2 = validateSubmission(e, { ...opts, descriptors: [live[0]] });
      expect(at(fs2)).toEqual(['error:server.unknownTool@$.tools.delete_card']);
    });
  });

  it('derives the $schema constant from the vendor', () => {
    expect(submissionSchemaUrl({ vendor: 'openai' })).toBe('https://developers.openai.com/apps-sdk/schemas/chatgpt-app-submission.v1.json');
    expect(submissionSchemaUrl({ vendor: 'vendor' })).toBe(
      'https://developers.vendor.example/apps-sdk/schemas/vendor-app-submission.v1.json',
    );
    expect(submissionSchemaUrl({ vendor: 'vendor', submissionSchemaUrl: 'https://x.example/s.json' })).toBe('https://x.example/s.json');
    const d = good();
    expect(validateSubmission(d, { schemaUrl: submissionSchemaUrl({ vendor: 'vendor' }) }).map((f) => f.path)).toEqual(['$.$schema']);
  });
});
