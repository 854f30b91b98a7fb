import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import {
  checkContent,
  checkMetadata,
  checkResponseFormat,
  checkToolChoice,
  checkToolResources,
  checkTools,
  checkTruncation,
} from './validate.js';

/** The 400 a check throws: its param and message. */
function refusal(fn: () => void): { param: string | null; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    return { param: (err as ApiError).param, message: (err as ApiError).message };
  }
  throw new Error('expected a refusal');
}

describe('threads interface field rules', () => {
  it('metadata: 16 pairs, keys ≤ 64, string values ≤ 512', () => {
    expect(() => checkMetadata(Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v'.repeat(512)])))).not.toThrow();
    expect(() => checkMetadata(null)).not.toThrow();
    expect(refusal(() => checkMetadata(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']))))).toMatchObject({
      param: 'metadata',
    });
    expect(refusal(() => checkMetadata({ ['k'.repeat(65)]: 'v' })).message).toContain('64');
    expect(refusal(() => checkMetadata({ a: 1 }))).toMatchObject({ param: 'metadata.a' });
    expect(refusal(() => checkMetadata('x'))).toMatchObject({ param: 'metadata' });
  });

  it('tools: types, function names, file_search bounds, ranking options', () => {
    expect(() =>
      checkTools(
        [
          { type: 'code_interpreter' },
          { type: 'file_search', file_search: { max_num_results: 1, ranking_options: { score_threshold: 0 } } },
          { type: 'function', function: { name: 'a-b_C9', strict: null } },
        ],
        128,
      ),
    ).not.toThrow();
    expect(refusal(() => checkTools([{ type: 'file_search', file_search: { max_num_results: 1.5 } }], 128)).param).toBe(
      'tools[0].file_search.max_num_results',
    );
    expect(refusal(() => checkTools([{ type: 'file_search', file_search: { ranking_options: {} } }], 128)).param).toBe(
      'tools[0].file_search.ranking_options.score_threshold',
    );
    expect(refusal(() => checkTools([{ type: 'code_interpreter', extra: 1 }], 128)).param).toBe('tools[0].extra');
    expect(
      refusal(() =>
        checkTools(
          [
            { type: 'function', function: { name: 'f' } },
            { type: 'function', function: { name: 'f' } },
          ],
          128,
        ),
      ).message,
    ).toContain('unique');
    expect(refusal(() => checkTools([{ type: 'function', function: { name: 'f', parameters: [] } }], 128)).param).toBe(
      'tools[0].function.parameters',
    );
    expect(refusal(() => checkTools([{}, {}], 1)).param).toBe('tools');
  });

  it('tool_resources: 20 code interpreter files, one vector store, the helper only where allowed', () => {
    expect(() =>
      checkToolResources({
        code_interpreter: { file_ids: Array.from({ length: 20 }, (_, i) => `f${i}`) },
        file_search: { vector_store_ids: ['vs_1'] },
      }),
    ).not.toThrow();
    expect(() =>
      checkToolResources({
        file_search: {
          vector_stores: [
            { file_ids: ['f'], chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } } },
          ],
        },
      }),
    ).not.toThrow();
    expect(refusal(() => checkToolResources({ file_search: { vector_stores: [{}] } }, 'tool_resources', { helper: false })).param).toBe(
      'tool_resources.file_search.vector_stores',
    );
    expect(
      refusal(() =>
        checkToolResources({
          file_search: {
            vector_stores: [{ chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 401 } } }],
          },
        }),
      ).param,
    ).toBe('tool_resources.file_search.vector_stores[0].chunking_strategy.static.chunk_overlap_tokens');
    expect(refusal(() => checkToolResources({ file_search: { vector_store_ids: [], vector_stores: [] } })).message).toContain('not both');
    expect(refusal(() => checkToolResources({ other: {} })).param).toBe('tool_resources.other');
  });

  it('response_format: auto, text, json_object, json_schema with its name rules', () => {
    for (const ok of [
      'auto',
      { type: 'text' },
      { type: 'json_object' },
      { type: 'json_schema', json_schema: { name: 'A_b-9', schema: {}, strict: true, description: 'd' } },
      null,
    ]) {
      expect(() => checkResponseFormat(ok)).not.toThrow();
    }
    expect(refusal(() => checkResponseFormat({ type: 'json_schema', json_schema: { name: 'x'.repeat(65) } })).param).toBe(
      'response_format.json_schema.name',
    );
    expect(refusal(() => checkResponseFormat({ type: 'json_schema', json_schema: { name: 'ok', schema: 'x' } })).param).toBe(
      'response_format.json_schema.schema',
    );
    expect(refusal(() => checkResponseFormat({ type: 'text', json_schema: {} })).param).toBe('response_format.json_schema');
    expect(refusal(() => checkResponseFormat({ type: 'yaml' })).param).toBe('response_format.type');
  });

  it('tool_choice: none, auto, required or a named tool; function needs a name', () => {
    for (const ok of [
      'none',
      'auto',
      'required',
      { type: 'file_search' },
      { type: 'code_interpreter' },
      { type: 'function', function: { name: 'f' } },
    ])
      expect(() => checkToolChoice(ok)).not.toThrow();
    expect(refusal(() => checkToolChoice({ type: 'function', function: { name: 5 } })).param).toBe('tool_choice.function.name');
    expect(refusal(() => checkToolChoice({ type: 'file_search', function: { name: 'f' } })).param).toBe('tool_choice.function');
  });

  it('truncation_strategy: auto or last_messages ≥ 1', () => {
    expect(() => checkTruncation({ type: 'auto' })).not.toThrow();
    expect(() => checkTruncation({ type: 'auto', last_messages: null })).not.toThrow();
    expect(() => checkTruncation({ type: 'last_messages', last_messages: 1 })).not.toThrow();
    expect(refusal(() => checkTruncation({})).param).toBe('truncation_strategy.type');
    expect(refusal(() => checkTruncation({ type: 'last_messages', last_messages: 2.5 })).param).toBe('truncation_strategy.last_messages');
  });

  it('content: text, image_file and image_url with the allowed extensions and details', () => {
    expect(() =>
      checkContent([
        { type: 'text', text: 'hi' },
        { type: 'image_url', image_url: { url: 'https://a.io/x.jpeg?size=2' } },
        { type: 'image_url', image_url: { url: 'http://a.io/x.webp', detail: 'high' } },
        { type: 'image_url', image_url: { url: 'data:image/gif;base64,R0lGOD' } },
        { type: 'image_file', image_file: { file_id: 'file-1', detail: 'low' } },
      ]),
    ).not.toThrow();
    for (const url of ['https://a.io/x.svg', 'https://a.io/x', 'ftp://a.io/x.png', 'not a url', 'data:image/svg+xml;base64,AA']) {
      expect(refusal(() => checkContent([{ type: 'image_url', image_url: { url } }])).param).toBe('content[0].image_url.url');
    }
    expect(refusal(() => checkContent([{ type: 'refusal', refusal: 'no' }])).param).toBe('content[0].type');
    expect(refusal(() => checkContent([{ type: 'image_file', image_file: { file_id: 'f', detail: 'max' } }])).param).toBe(
      'content[0].image_file.detail',
    );
    expect(refusal(() => checkContent([{ type: 'text' }])).param).toBe('content[0].text');
  });
});
