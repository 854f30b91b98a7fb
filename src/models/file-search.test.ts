import { describe, expect, it } from 'vitest';
import { formatFileSearchOutput, parseFileSearchOutput } from './file-search.js';

describe('file search output', () => {
  it('puts each passage under its marker, and reads them back in order', () => {
    const text = formatFileSearchOutput(2, [
      { fileName: 'a.md', score: 0.91234, text: 'first\n\nwith a blank line' },
      { fileName: 'b.md', score: 0.5, text: 'second' },
    ]);
    expect(text).toBe('【2:0†source】 a.md (score 0.912)\nfirst\n\nwith a blank line\n\n【2:1†source】 b.md (score 0.500)\nsecond');
    expect(parseFileSearchOutput(text)).toEqual([
      { marker: '【2:0†source】', text: 'first\n\nwith a blank line' },
      { marker: '【2:1†source】', text: 'second' },
    ]);
    expect(formatFileSearchOutput(0, [])).toBe('No results found in the files.');
    expect(parseFileSearchOutput('No results found in the files.')).toEqual([]);
  });
});
