import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { scanInput } from './validate.js';

const EP = '/v1/chat/completions';
const line = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: EP,
    body: { model: 'm', messages: [{ role: 'user', content: 'hello there' }] },
    ...extra,
  });
const scan = (text: string) => scanInput(Readable.from([Buffer.from(text)]), EP, 1000);

describe('scanInput', () => {
  it('counts requests and estimates input tokens as the rate limiter does (characters / 4)', async () => {
    const s = await scan(`${line('a')}\n${line('b')}\n`);
    const chars = JSON.stringify([{ role: 'user', content: 'hello there' }]).length * 2;
    expect(s).toEqual({ requests: 2, model: 'm', tokens: Math.ceil(chars / 4), errors: [] });
  });

  it('lists each bad line with its code, param and line number', async () => {
    const s = await scan(
      [
        line('a'),
        '{not json',
        line('a'),
        line('c', { url: '/v1/embeddings' }),
        line('d', { method: 'GET' }),
        JSON.stringify({ custom_id: 'e', method: 'POST', url: EP, body: { model: 'other', messages: [] } }),
        JSON.stringify({ custom_id: 'f', method: 'POST', url: EP }),
        line('g', { extra: 1 }),
        `"${'x'.repeat(2000)}"`,
      ].join('\n'),
    );
    expect(s.errors.map((e) => [e.code, e.param, e.line])).toEqual([
      ['invalid_json_line', null, 2],
      ['duplicate_custom_id', 'custom_id', 3],
      ['invalid_url', 'url', 4],
      ['invalid_value', 'method', 5],
      ['mismatched_model', 'body.model', 6],
      ['missing_required_parameter', 'body', 7],
      ['unknown_parameter', 'extra', 8],
      ['line_too_long', null, 9],
    ]);
  });

  it('refuses an empty file', async () => {
    expect((await scan('\n\n')).errors).toEqual([
      { code: 'empty_file', message: 'The batch input file is empty.', param: null, line: null },
    ]);
  });
});
