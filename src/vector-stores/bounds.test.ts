import { describe, expect, it } from 'vitest';
import { docxBomb, htmlBomb, jsonBomb, pdfBomb } from '../../test/hostile/bombs.js';
import { makeDocx, makePdf } from '../../test/vector-stores/fixtures.js';
import { extractText } from './extract.js';
import { DEFAULT_LIMITS, LimitError, type IngestLimits } from './limits.js';

const small: IngestLimits = { ...DEFAULT_LIMITS, inflatedBytes: 16 * 1024 * 1024, depth: 32, pages: 3 };

describe('limits checked before parsing', () => {
  it('refuses a DOCX whose parts inflate past the limit, naming it, before mammoth inflates them', async () => {
    const bomb = docxBomb(32);
    expect(bomb.length).toBeLessThan(200_000);
    const err = await extractText('bomb.docx', bomb, small).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LimitError);
    expect((err as Error).message).toMatch(/bomb\.docx .*16 MB \(--ingest-max-inflated-mb\)/);
  });

  it('refuses a DOCX whose header understates what a part inflates to', async () => {
    const bomb = docxBomb(32);
    // The central directory's inflated size of word/document.xml: claim 1 KB.
    const end = bomb.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    let at = bomb.readUInt32LE(end + 16);
    for (let i = 0; i < 2; i++) at += 46 + bomb.readUInt16LE(at + 28) + bomb.readUInt16LE(at + 30) + bomb.readUInt16LE(at + 32);
    bomb.writeUInt32LE(1024, at + 24);
    await expect(extractText('liar.docx', bomb, small)).rejects.toBeInstanceOf(LimitError);
  });

  it('refuses a DOCX of too many parts', async () => {
    await expect(extractText('parts.docx', makeDocx(['a']), { ...small, pages: 2 })).rejects.toThrow(/has 3 parts.*--ingest-max-pages/);
  });

  it('refuses a PDF whose streams inflate past the limit, and one of too many pages', async () => {
    const bomb = pdfBomb(64);
    expect(bomb.length).toBeLessThan(100_000);
    await expect(extractText('zeros.pdf', bomb, small)).rejects.toThrow(/zeros\.pdf has streams that inflate to more.*16 MB/);
    await expect(extractText('one.pdf', makePdf(['hello']), { ...small, pages: 0 })).rejects.toThrow(/has 1 pages.*--ingest-max-pages/);
    expect(await extractText('one.pdf', makePdf(['hello']), small)).toBe('hello');
  });

  it('refuses HTML and JSON nested past the limit, at once', async () => {
    const started = performance.now();
    await expect(extractText('deep.html', htmlBomb(), small)).rejects.toThrow(/nests elements deeper.*32 levels \(--ingest-max-depth\)/);
    await expect(extractText('deep.json', jsonBomb(), small)).rejects.toThrow(/nests arrays and objects deeper.*32 levels/);
    // A liveness bound, not a measurement: the old path took minutes.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(await extractText('ok.json', Buffer.from('{"a":[[1],"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["]}'), small)).toContain('"a"');
    expect(await extractText('ok.html', Buffer.from(`${'<div>'.repeat(30)}x${'</div>'.repeat(30)}`), small)).toBe('x');
  });
});
