/** The `$schema` URL the real platform publishes for its import file (vendor `openai`). */
export const OPENAI_SUBMISSION_SCHEMA_URL = 'https://developers.openai.com/apps-sdk/schemas/chatgpt-app-submission.v1.json';

/**
 * The `$schema` constant of the import file for a vendor. With `openai` it is the platform's published URL, so
 * files made for it validate unchanged; for any other vendor Standin follows the same pattern under that vendor's
 * name (documented in docs/apps.md). An explicit setting wins.
 */
export function submissionSchemaUrl(settings: { vendor: string; submissionSchemaUrl?: string }): string {
  if (settings.submissionSchemaUrl) return settings.submissionSchemaUrl;
  if (settings.vendor === 'openai') return OPENAI_SUBMISSION_SCHEMA_URL;
  const v = encodeURIComponent(settings.vendor.toLowerCase());
  return `https://developers.${v}.example/apps-sdk/schemas/${v}-app-submission.v1.json`;
}

export const CATEGORIES = [
  'BUSINESS',
  'COLLABORATION',
  'DESIGN',
  'DEVELOPER_TOOLS',
  'EDUCATION',
  'ENTERTAINMENT',
  'FINANCE',
  'FOOD',
  'LIFESTYLE',
  'NEWS',
  'PRODUCTIVITY',
  'SHOPPING',
  'TRAVEL',
];

/**
 * The import file as a JSON Schema (2020-12). Extra properties are allowed at every level (the spec says so);
 * non-blank is `pattern: "\\S"`, the same way the published schema says it.
 */
export function submissionSchema(schemaUrl: string) {
  const nonBlank = { type: 'string', pattern: '\\S' };
  const long = { type: 'string', pattern: '\\S', maxLength: 4000 };
  const nullableString = { type: ['string', 'null'] };
  const nullableStrings = { type: ['array', 'null'], items: { type: 'string' } };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: schemaUrl,
    title: 'App submission import file',
    type: 'object',
    required: ['$schema', 'schema_version', 'tools'],
    properties: {
      $schema: { const: schemaUrl },
      schema_version: { type: 'integer', const: 1 },
      app_info: { $ref: '#/$defs/appInfo' },
      tools: { type: 'object', additionalProperties: { $ref: '#/$defs/tool' } },
      test_cases: { type: 'array', minItems: 5, items: { $ref: '#/$defs/testCase' } },
      negative_test_cases: { type: 'array', minItems: 3, items: { $ref: '#/$defs/negativeTestCase' } },
    },
    $defs: {
      appInfo: {
        type: 'object',
        properties: {
          display_name: nonBlank,
          subtitle: { type: 'string', pattern: '\\S', maxLength: 30 },
          description: long,
          category: { type: 'string', enum: CATEGORIES },
        },
      },
      tool: {
        type: 'object',
        required: ['annotations', 'justifications'],
        properties: {
          annotations: {
            type: 'object',
            required: ['readOnlyHint', 'openWorldHint', 'destructiveHint'],
            properties: { readOnlyHint: { type: 'boolean' }, openWorldHint: { type: 'boolean' }, destructiveHint: { type: 'boolean' } },
          },
          justifications: {
            type: 'object',
            required: ['read_only_justification', 'open_world_justification', 'destructive_justification'],
            properties: { read_only_justification: nonBlank, open_world_justification: nonBlank, destructive_justification: nonBlank },
          },
        },
      },
      testCase: {
        type: 'object',
        required: ['description', 'user_prompt', 'tools_triggered'],
        properties: {
          description: long,
          user_prompt: nonBlank,
          tools_triggered: nonBlank,
          file_attachment_urls: nullableStrings,
          expected_output: nullableString,
          expected_output_url: nullableString,
        },
      },
      negativeTestCase: {
        type: 'object',
        required: ['description', 'user_prompt'],
        properties: {
          description: long,
          user_prompt: nonBlank,
          file_attachment_urls: nullableStrings,
          tools_triggered: nullableString,
          expected_output: nullableString,
          expected_output_url: nullableString,
        },
      },
    },
  };
}
