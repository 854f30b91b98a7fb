import { describe, expect, it } from 'vitest';
import { AUTO_CHUNKING } from './chunk.js';
import { DEFAULT_LIMITS } from './limits.js';
import { prepareFile } from './prepare.js';

const prepare = (filename: string, data: Buffer) =>
  prepareFile({ filename, data, chunking: AUTO_CHUNKING, limits: DEFAULT_LIMITS, embed: false });

describe('a prepared file’s UTF-8 (what the server stores)', () => {
  it('is the text’s UTF-8, taken from a text file’s own bytes where they are it', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const cases: [string, Buffer, boolean][] = [
      ['plain.txt', Buffer.from('Plain words, ünïcödé, 😀 and \uFFFD.'), true],
      ['bom.md', Buffer.concat([bom, Buffer.from('After a byte-order mark.')]), true],
      ['two.txt', Buffer.concat([bom, bom, Buffer.from('After two of them.')]), true],
      ['data.json', Buffer.from('{"a": ["é", 1]}'), true],
      // NULs are dropped from the text: its UTF-8 is no longer the file's.
      ['nul.txt', Buffer.from('before\u0000after'), false],
      // A page's text is not its bytes.
      ['page.html', Buffer.from('<p>A <b>page</b>&amp; more</p>'), false],
    ];
    for (const [filename, pooled, asIs] of cases) {
      // Its own memory (Buffer.from shares a pool): the UTF-8 is the file's bytes only when it is a view of them.
      const data = Buffer.alloc(pooled.length);
      pooled.copy(data);
      const { prepared, utf8, spans } = await prepare(filename, data);
      expect(Buffer.from(utf8).equals(Buffer.from(prepared.text)), filename).toBe(true);
      expect(utf8.buffer === data.buffer, filename).toBe(asIs);
      prepared.chunks.forEach((c, i) => expect(Buffer.from(utf8).toString('utf8', spans[2 * i], spans[2 * i + 1])).toBe(c.text));
    }
  });
});
