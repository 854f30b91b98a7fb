import { describe, expect, it } from 'vitest';
import { parseServerSpec, splitCommand } from './mcp.js';

describe('server specs', () => {
  it('reads URLs as Streamable HTTP with SSE fallback, sse+ URLs as SSE only', () => {
    expect(parseServerSpec('http://localhost:3000/mcp')).toEqual({ kind: 'url', url: 'http://localhost:3000/mcp', transport: 'auto' });
    expect(parseServerSpec('http://localhost:3000/mcp', 'http')).toEqual({
      kind: 'url',
      url: 'http://localhost:3000/mcp',
      transport: 'http',
    });
    expect(parseServerSpec('sse+https://x.example/sse')).toEqual({ kind: 'url', url: 'https://x.example/sse', transport: 'sse' });
  });
  it('reads anything else as a command line run over stdio', () => {
    expect(parseServerSpec('node "my server.js" --flag \'a b\'')).toEqual({
      kind: 'stdio',
      command: 'node',
      args: ['my server.js', '--flag', 'a b'],
    });
    expect(parseServerSpec('http://x', 'stdio')).toEqual({ kind: 'stdio', command: 'http://x', args: [] });
  });
  it('refuses empty servers and open quotes', () => {
    expect(() => parseServerSpec('  ')).toThrow(/empty/);
    expect(() => splitCommand('node "x')).toThrow(/unterminated/);
  });
  it('splits with escapes and empty quoted words', () => {
    expect(splitCommand('a\\ b "" c')).toEqual(['a b', '', 'c']);
  });
});
