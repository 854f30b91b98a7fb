import { describe, expect, it } from 'vitest';
import { makeDocx, makePdf } from '../../test/vector-stores/fixtures.js';
import { ExtractError, extractText } from './extract.js';

describe('text extraction', () => {
  it('reads text, markdown, JSON and CSV as UTF-8 (a BOM dropped)', async () => {
    expect(await extractText('a.txt', Buffer.from('\uFEFFhéllo'))).toBe('héllo');
    expect(await extractText('A.MD', Buffer.from('# Title'))).toBe('# Title');
    expect(await extractText('a.json', Buffer.from('{"a":1}'))).toBe('{"a":1}');
    expect(await extractText('a.csv', Buffer.from('x,y\n1,2'))).toBe('x,y\n1,2');
  });

  it('reads HTML without markup, scripts or link targets', async () => {
    const text = await extractText(
      'page.html',
      Buffer.from('<h1>Title</h1><p>Hello <a href="http://x">world</a></p><script>steal()</script>'),
    );
    expect(text).toContain('Hello world');
    expect(text).not.toMatch(/steal|http:\/\/x|<p>/);
  });

  it('reads a PDF and a DOCX made here', async () => {
    expect(await extractText('doc.pdf', makePdf(['The capital of Zorbania is Quillport.', 'Second line (with parentheses).']))).toBe(
      'The capital of Zorbania is Quillport.\nSecond line (with parentheses).',
    );
    expect((await extractText('doc.docx', makeDocx(['The docx says hello.', 'Second paragraph.']))).trim()).toBe(
      'The docx says hello.\n\nSecond paragraph.',
    );
  });

  it('fails unsupported types and unreadable files with the platform codes', async () => {
    await expect(extractText('image.png', Buffer.from([0x89, 0x50]))).rejects.toMatchObject({ code: 'unsupported_file' });
    await expect(extractText('noext', Buffer.from('x'))).rejects.toBeInstanceOf(ExtractError);
    await expect(extractText('bad.pdf', Buffer.from('not a pdf'))).rejects.toMatchObject({ code: 'invalid_file' });
    await expect(extractText('bad.docx', Buffer.from('not a zip'))).rejects.toMatchObject({ code: 'invalid_file' });
    await expect(extractText('bad.txt', Buffer.from([0xff, 0xfe, 0xfd]))).rejects.toMatchObject({ code: 'invalid_file' });
  });
});
