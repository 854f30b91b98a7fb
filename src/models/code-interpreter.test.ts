import { describe, expect, it } from 'vitest';
import { createBuiltinProvider } from './builtin.js';
import {
  CodeArgumentDecoder,
  CODE_INTERPRETER_FUNCTION,
  codeOf,
  formatCodeOutput,
  parseCodeOutput,
  pythonBlocks,
} from './code-interpreter.js';
import { compileModelsConfig } from './config.js';
import type { ChatChunk, ChatRequest } from './types.js';

function provider(entry: Record<string, unknown> = {}) {
  const [route] = compileModelsConfig({ m: { provider: 'builtin', ...entry } } as Parameters<typeof compileModelsConfig>[0]);
  return createBuiltinProvider(route.builtin!);
}

const tool = { type: 'function' as const, function: CODE_INTERPRETER_FUNCTION };
const ask = (content: string, over: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'm',
  messages: [{ role: 'user', content }],
  tools: [tool],
  interpreter: { name: 'code_interpreter' },
  ...over,
});

describe('code_interpreter for models', () => {
  it('decodes the code of streamed JSON arguments piece by piece, escapes split across pieces included', () => {
    const code = 'print("a\\tb")\nx = "\u00e9" + \'\\\\\'\n';
    const args = JSON.stringify({ code });
    for (const size of [1, 2, 3, 7, args.length]) {
      const d = new CodeArgumentDecoder();
      let out = '';
      for (let i = 0; i < args.length; i += size) out += d.push(args.slice(i, i + size));
      expect(out).toBe(code);
    }
    const unicode = new CodeArgumentDecoder();
    expect(unicode.push('{"code": "\\u00')).toBe('');
    expect(unicode.push('e9!"}')).toBe('\u00e9!');
    expect(codeOf(args)).toBe(code);
    expect(codeOf('print(1)')).toBe('print(1)');
  });

  it('formats results for the model and reads them back', () => {
    const text = formatCodeOutput('42\n', ['/mnt/data/a.csv', '/mnt/data/b c.png']);
    expect(text).toBe('42\n[files written: sandbox:/mnt/data/a.csv, sandbox:/mnt/data/b c.png]');
    expect(parseCodeOutput(text).logs).toBe('42');
    expect(parseCodeOutput(formatCodeOutput('', []))).toEqual({ logs: '', links: [] });
  });

  it('finds fenced python blocks', () => {
    expect(pythonBlocks('run\n```python\nprint(1)\n```\nand\n```py\nprint(2)\n```\n```js\nno\n```')).toEqual(['print(1)\n', 'print(2)\n']);
  });

  it('built-in model: runs each fenced python block, streaming the code; a forced call runs the message; then answers with the logs and links', async () => {
    const seen: ChatChunk[] = [];
    const r = await provider({ chunk_chars: 4 }).complete(ask('please\n```python\nprint(6 * 7)\n```\n```python\nx = 1\n```'), (c) =>
      seen.push(c),
    );
    expect(r.tool_calls.map((c) => JSON.parse(c.function.arguments))).toEqual([{ code: 'print(6 * 7)\n' }, { code: 'x = 1\n' }]);
    // The arguments of a code call stream in pieces.
    expect(seen.filter((c) => c.type === 'tool_call' && c.index === 0 && c.arguments).length).toBeGreaterThan(1);

    const single = await provider().complete(ask('```python\na\n```\n```python\nb\n```', { parallel_tool_calls: false }));
    expect(single.tool_calls).toHaveLength(1);
    // No block: not called (auto), unless forced — then the message itself is the code.
    expect((await provider().complete(ask('what is 6 * 7?'))).tool_calls).toHaveLength(0);
    const forced = await provider().complete(
      ask('print(6 * 7)', { tool_choice: { type: 'function', function: { name: 'code_interpreter' } } }),
    );
    expect(JSON.parse(forced.tool_calls[0].function.arguments)).toEqual({ code: 'print(6 * 7)' });
    // tool_choice none: never.
    expect((await provider().complete(ask('```python\nprint(1)\n```', { tool_choice: 'none' }))).tool_calls).toHaveLength(0);

    const call = { id: 'call_1', type: 'function' as const, function: { name: 'code_interpreter', arguments: '{"code":"print(42)"}' } };
    const answer = await provider().complete(
      ask('go', {
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: 'call_1', content: formatCodeOutput('42\n', ['/mnt/data/out.csv']) },
        ],
      }),
    );
    expect(answer.content).toBe('The code printed:\n\n```text\n42\n```\n\nDownload [out.csv](sandbox:/mnt/data/out.csv)');
  });
});
