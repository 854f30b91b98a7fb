import { describe, expect, it } from 'vitest';
import { countPrompt } from '../../models/service.js';
import type { MessageRow } from '../store/messages.js';
import type { RunRow } from '../store/runs.js';
import type { StepRow } from '../store/steps.js';
import { buildPrompt, type PromptInput } from './prompt.js';

/** The prompt builder is a pure function: rows in, the model request (or the reason to stop) out. */

const weather = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

function run(over: Partial<RunRow> = {}): PromptInput['run'] {
  return {
    model: 'gpt-4o',
    instructions: 'Be brief.',
    tools: '[]',
    truncation_strategy: JSON.stringify({ type: 'auto', last_messages: null }),
    tool_choice: '"auto"',
    response_format: '"auto"',
    temperature: null,
    top_p: null,
    parallel_tool_calls: 1,
    max_prompt_tokens: null,
    prompt_used: 0,
    max_completion_tokens: null,
    completion_used: 0,
    ...over,
  };
}

function message(n: number, text: string, role: 'user' | 'assistant' = 'user', content?: unknown[]): MessageRow {
  return {
    id: `msg_${String(n).padStart(4, '0')}`,
    project_id: 'proj_1',
    thread_id: 'thread_1',
    created_at: n,
    role,
    content: JSON.stringify(content ?? [{ type: 'text', text: { value: text, annotations: [] } }]),
    attachments: '[]',
    metadata: null,
    assistant_id: null,
    run_id: null,
    status: 'completed',
    completed_at: n,
    incomplete_at: null,
    incomplete_details: null,
  };
}

function toolStep(n: number, calls: { id: string; name: string; args: string; output: string | null }[]): StepRow {
  const tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args, output: c.output } }));
  return {
    id: `step_${String(n).padStart(4, '0')}`,
    project_id: 'proj_1',
    run_id: 'run_1',
    thread_id: 'thread_1',
    assistant_id: 'asst_1',
    created_at: n,
    type: 'tool_calls',
    status: 'completed',
    step_details: JSON.stringify({ type: 'tool_calls', tool_calls }),
    last_error: null,
    cancelled_at: null,
    completed_at: n,
    expired_at: null,
    failed_at: null,
    usage: null,
    metadata: null,
  };
}

const request = (input: Partial<PromptInput>) => {
  const out = buildPrompt({ run: run(), messages: [], steps: [], contextWindow: 128_000, ...input });
  if (!('request' in out)) throw new Error(`no request: ${JSON.stringify(out)}`);
  return out.request;
};

describe('buildPrompt', () => {
  it('puts the instructions first, then the thread and the run’s tool calls in creation order', () => {
    const req = request({
      run: run({ tools: JSON.stringify([weather]), temperature: 0.3 }),
      messages: [message(1, 'Weather in Paris?'), message(3, 'And Oslo?')],
      steps: [toolStep(2, [{ id: 'call_1', name: 'get_weather', args: '{"city":"Paris"}', output: '21°C' }])],
    });
    expect(req.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '21°C' },
      { role: 'user', content: 'And Oslo?' },
    ]);
    expect(req).toMatchObject({
      model: 'gpt-4o',
      temperature: 0.3,
      top_p: null,
      max_tokens: null,
      tools: [weather],
      tool_choice: 'auto',
      parallel_tool_calls: true,
    });
  });

  it('names images, since providers take text; no instructions, no system message', () => {
    const blocks = [
      { type: 'text', text: { value: 'look', annotations: [] } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'auto' } },
      { type: 'image_file', image_file: { file_id: 'file-1', detail: 'auto' } },
    ];
    const req = request({ run: run({ instructions: '' }), messages: [message(1, '', 'user', blocks), message(2, 'a cat', 'assistant')] });
    expect(req.messages).toEqual([
      { role: 'user', content: 'look\n[image: https://example.com/cat.png]\n[image file: file-1]' },
      { role: 'assistant', content: 'a cat' },
    ]);
  });

  it('offers only function tools: no tools, no tool_choice; a forced built-in tool means auto; a named function is kept', () => {
    expect(request({ run: run({ tools: JSON.stringify([{ type: 'code_interpreter' }]) }) })).not.toHaveProperty('tools');
    expect(request({ run: run({ tools: JSON.stringify([{ type: 'code_interpreter' }]) }) })).not.toHaveProperty('tool_choice');
    const forced = request({
      run: run({
        tools: JSON.stringify([weather, { type: 'code_interpreter' }]),
        tool_choice: JSON.stringify({ type: 'code_interpreter' }),
        parallel_tool_calls: 0,
      }),
    });
    expect(forced).toMatchObject({ tools: [weather], tool_choice: 'auto', parallel_tool_calls: false });
    const named = request({
      run: run({ tools: JSON.stringify([weather]), tool_choice: JSON.stringify({ type: 'function', function: { name: 'get_weather' } }) }),
    });
    expect(named.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
  });

  it('passes a response format other than auto', () => {
    expect(request({})).not.toHaveProperty('response_format');
    expect(request({ run: run({ response_format: JSON.stringify({ type: 'json_object' }) }) }).response_format).toEqual({
      type: 'json_object',
    });
  });

  it('last_messages keeps the n latest thread messages and every tool call of the run', () => {
    const req = request({
      run: run({ truncation_strategy: JSON.stringify({ type: 'last_messages', last_messages: 1 }) }),
      messages: [message(1, 'one'), message(2, 'two'), message(4, 'three')],
      steps: [toolStep(3, [{ id: 'call_1', name: 'f', args: '{}', output: 'x' }])],
    });
    expect(req.messages.map((m) => m.content)).toEqual(['Be brief.', null, 'x', 'three']);
  });

  it('auto truncation drops the oldest messages after the first until the prompt fits max_prompt_tokens', () => {
    const long = (n: number) => message(n, `message ${n} `.repeat(40));
    const messages = [long(1), long(2), long(3), long(4), long(5)];
    const whole = countPrompt([
      { role: 'system', content: 'Be brief.' },
      ...messages.map((m) => ({ role: 'user' as const, content: JSON.parse(m.content)[0].text.value })),
    ]);
    // Room for about three of the five messages.
    const req = request({ run: run({ max_prompt_tokens: Math.floor((whole * 3) / 5) + 10 }), messages });
    const kept = req.messages.slice(1).map((m) => String(m.content).slice(0, 10));
    expect(kept[0]).toBe('message 1 ');
    expect(kept.at(-1)).toBe('message 5 ');
    expect(kept.length).toBeLessThan(5);
    expect(kept).not.toContain('message 2 ');
  });

  it('ends the run incomplete when the prompt cannot fit max_prompt_tokens, or max_completion_tokens is spent', () => {
    const messages = [message(1, 'word '.repeat(600))];
    expect(buildPrompt({ run: run({ max_prompt_tokens: 256 }), messages, steps: [], contextWindow: 128_000 })).toEqual({
      incomplete: 'max_prompt_tokens',
    });
    // Earlier turns' usage counts against the limit.
    expect(
      buildPrompt({
        run: run({ max_prompt_tokens: 300, prompt_used: 290 }),
        messages: [message(1, 'hi')],
        steps: [],
        contextWindow: 128_000,
      }),
    ).toEqual({ incomplete: 'max_prompt_tokens' });
    expect(
      buildPrompt({
        run: run({ max_completion_tokens: 256, completion_used: 256 }),
        messages: [message(1, 'hi')],
        steps: [],
        contextWindow: 128_000,
      }),
    ).toEqual({ incomplete: 'max_completion_tokens' });
    expect(request({ run: run({ max_completion_tokens: 300, completion_used: 100 }), messages: [message(1, 'hi')] }).max_tokens).toBe(200);
  });

  it('without max_prompt_tokens, fits the context window less a completion reserve, never stopping the run', () => {
    const messages = [message(1, 'first'), message(2, 'word '.repeat(3000)), message(3, 'latest')];
    const req = request({ messages, contextWindow: 2000 });
    expect(req.messages.map((m) => m.content)).toEqual(['Be brief.', 'first', 'latest']);
  });

  it('offers file_search as a function while the run can search, and gives its results back under their markers', () => {
    const tools = JSON.stringify([{ type: 'file_search', file_search: { max_num_results: 20 } }, weather]);
    // No store to search: not offered.
    expect(request({ run: run({ tools }), messages: [message(1, 'q?')] }).tools?.map((t) => t.function.name)).toEqual(['get_weather']);
    const first = request({
      run: run({ tools, tool_choice: JSON.stringify({ type: 'file_search' }) }),
      messages: [message(1, 'q?')],
      fileSearch: true,
    });
    expect(first.tools?.map((t) => t.function.name)).toEqual(['get_weather', 'file_search']);
    expect(first.tools?.[1].function.parameters).toMatchObject({ required: ['query'] });
    expect(first.retrieval).toEqual({ name: 'file_search' });
    expect(first.tool_choice).toEqual({ type: 'function', function: { name: 'file_search' } });

    const search = (n: number, id: string, results: { file: string; text: string }[]): StepRow => ({
      ...toolStep(n, []),
      step_details: JSON.stringify({
        type: 'tool_calls',
        tool_calls: [
          {
            id,
            type: 'file_search',
            arguments: `{"query":"q${n}"}`,
            file_search: {
              ranking_options: { ranker: 'default_2024_08_21', score_threshold: 0 },
              results: results.map((r) => ({
                file_id: `file-${r.file}`,
                file_name: r.file,
                score: 0.5,
                content: [{ type: 'text', text: r.text }],
              })),
            },
          },
        ],
      }),
    });
    const steps = [
      search(2, 'call_a', [{ file: 'a.md', text: 'alpha' }]),
      search(3, 'call_b', [
        { file: 'b.md', text: 'beta' },
        { file: 'c.md', text: 'gamma' },
      ]),
    ];
    const later = request({
      run: run({ tools, tool_choice: JSON.stringify({ type: 'file_search' }) }),
      messages: [message(1, 'q?')],
      steps,
      fileSearch: true,
    });
    // Once the run has searched, a forced file_search no longer forces it.
    expect(later.tool_choice).toBe('auto');
    expect(later.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'file_search', arguments: '{"query":"q2"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '【0:0†source】 a.md (score 0.500)\nalpha' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'file_search', arguments: '{"query":"q3"}' } }],
      },
      {
        role: 'tool',
        tool_call_id: 'call_b',
        content: '【1:0†source】 b.md (score 0.500)\nbeta\n\n【1:1†source】 c.md (score 0.500)\ngamma',
      },
    ]);
    const many = Array.from({ length: 8 }, (_, i) => search(10 + i, `call_${i}`, []));
    expect(request({ run: run({ tools }), messages: [message(1, 'q?')], steps: many, fileSearch: true }).tool_choice).toBe('none');
  });

  it('names the file search function apart from a function of the run called file_search', () => {
    const own = { type: 'function', function: { name: 'file_search', parameters: { type: 'object' } } };
    const req = request({
      run: run({ tools: JSON.stringify([{ type: 'file_search' }, own]) }),
      messages: [message(1, 'q?')],
      fileSearch: true,
    });
    expect(req.tools?.map((t) => t.function.name)).toEqual(['file_search', 'file_search_2']);
    expect(req.retrieval).toEqual({ name: 'file_search_2' });
  });
  it('offers code_interpreter as a function with the session files, forced until the run ran code, and gives results back', () => {
    const tools = JSON.stringify([weather, { type: 'code_interpreter' }]);
    const files = [{ path: '/mnt/data/file-abc', filename: 'data.csv' }];
    // Without an executor (no `interpreter`), the tool is not offered.
    expect(request({ run: run({ tools: JSON.stringify([{ type: 'code_interpreter' }]) }) })).not.toHaveProperty('interpreter');
    const first = request({ run: run({ tools, tool_choice: JSON.stringify({ type: 'code_interpreter' }) }), interpreter: { files } });
    expect(first.interpreter).toEqual({ name: 'code_interpreter' });
    const fn = first.tools?.find((t) => t.function.name === 'code_interpreter');
    expect(fn?.function.parameters).toMatchObject({ required: ['code'] });
    expect(fn?.function.description).toContain('/mnt/data/file-abc (data.csv)');
    expect(first.tool_choice).toEqual({ type: 'function', function: { name: 'code_interpreter' } });

    const call = {
      id: 'call_1',
      type: 'code_interpreter',
      code_interpreter: { input: 'print(6*7)', outputs: [{ type: 'logs', logs: '42\n' }] },
      files: [{ path: '/mnt/data/out.csv', file_id: 'file-out' }],
    };
    const step = { ...toolStep(2, []), step_details: JSON.stringify({ type: 'tool_calls', tool_calls: [call] }) };
    const after = request({
      run: run({ tools, tool_choice: JSON.stringify({ type: 'code_interpreter' }) }),
      messages: [message(1, 'compute')],
      steps: [step],
      interpreter: { files },
    });
    expect(after.tool_choice).toBe('auto');
    expect(after.messages.slice(-2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'code_interpreter', arguments: '{"code":"print(6*7)"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '42\n[files written: sandbox:/mnt/data/out.csv]' },
    ]);
  });

  it('names the code interpreter function apart from a function of the run called code_interpreter', () => {
    const own = { type: 'function', function: { name: 'code_interpreter', parameters: { type: 'object' } } };
    const req = request({ run: run({ tools: JSON.stringify([own, { type: 'code_interpreter' }]) }), interpreter: { files: [] } });
    expect(req.interpreter).toEqual({ name: 'code_interpreter_2' });
    expect(req.tools?.map((t) => t.function.name)).toEqual(['code_interpreter', 'code_interpreter_2']);
  });
});
