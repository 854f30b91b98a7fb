import { describe, expect, it } from 'vitest';
import { createClock } from '../core/clock.js';
import type { ResponseObject } from './schemas.js';
import { finish } from './service.js';

describe('responses', () => {
  it('maps finish reasons to statuses', () => {
    const clock = createClock();
    const base = { id: 'resp_1', status: 'in_progress', output: [] } as unknown as ResponseObject;
    const usage = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 };
    const done = finish({ clock }, base, { content: 'hi', tool_calls: [], finish_reason: 'stop', usage });
    expect(done).toMatchObject({
      status: 'completed',
      incomplete_details: null,
      usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
    });
    expect(done.output).toEqual([
      expect.objectContaining({
        type: 'message',
        role: 'assistant',
        content: [expect.objectContaining({ type: 'output_text', text: 'hi' })],
      }),
    ]);
    expect(finish({ clock }, base, { content: 'h', tool_calls: [], finish_reason: 'length', usage })).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      completed_at: null,
    });
    expect(finish({ clock }, base, { content: null, tool_calls: [], finish_reason: 'content_filter', usage })).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'content_filter' },
      output: [],
    });
    const call = finish({ clock }, base, {
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      finish_reason: 'tool_calls',
      usage,
    });
    expect(call.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":1}' })]);
  });
});
