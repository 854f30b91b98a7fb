import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { describe, expect, it } from 'vitest';
import { classesOf, pretokenEnd } from './pretokens.js';
import { random } from '../../test/random.js';

/** The pieces of the scan, and of gpt-tokenizer's regex. */
function scanned(text: string): string[] {
  const k = classesOf(text);
  const out: string[] = [];
  for (let p = 0; p < text.length;) {
    const e = pretokenEnd(text, k, p);
    expect(e).toBeGreaterThan(p);
    out.push(text.slice(p, e));
    p = e;
  }
  return out;
}
const regex = (text: string) => [...text.matchAll(O200K_TOKEN_SPLIT_REGEX)].map((m) => m[0]);

// Characters of every class the regex tells apart: cased and uncased letters (Lu Ll Lt Lm Lo), marks,
// numbers of three kinds, whitespace of several kinds and line breaks, the contraction letters, slashes,
// punctuation, astral letters and emoji, lone surrogates, NUL.
const ALPHABET = [
  'a', 'B', 'z', 'Z', 'é', 'É', 'ǅ', 'ʰ', 'ª', '語', 'テ', '\u0301', '\u0903', '1', '٣', '½', 'Ⅻ', ' ', ' ', '\t', '\n', '\r',
  '\u00a0', '\u3000', "'", 's', 'S', 'l', 'L', 'v', 'e', 'r', 'd', 'm', 't', '.', '/', '-', '[', '"', '😀', '👍🏽', '𝐀', '𝑎',
  '\ud800', '\udc00', 'ß', 'İ', 'ſ', '_', '#', '\u200b', '\u2028', '\ufeff', '\u0000', 'Σ', 'ς', 'ǈ', 'ᾈ',
]; // prettier-ignore

describe('o200k pre-tokens by a scan', () => {
  it('cuts short random strings of every character class exactly as the regex', () => {
    const r = random(11);
    for (let i = 0; i < 50_000; i++) {
      let s = '';
      for (let n = 1 + Math.floor(r() * 12); n > 0; n--) s += ALPHABET[Math.floor(r() * ALPHABET.length)];
      expect(scanned(s), JSON.stringify(s)).toEqual(regex(s));
    }
  });

  it('cuts prose, code, scripts, emoji and long runs exactly as the regex', () => {
    const text = [
      "The quick brown fox — it's 2026: the run's 1,234,567 tokens cost $12.50 (or 11,90 €)!\n\n",
      '    indented code { return a[i] + b[j]; }\r\n\r\n  \n',
      'Ünïcödé wörds, 日本語のテキスト。中文文本，한국어 텍스트, ελληνικά ΚΕΙΜΕΝΑ, русский ТЕКСТ, עברית, العربية, हिन्दी',
      'URLs like https://example.com/a/b?c=d&e=f#g and emails a.b@c.de; CamelCaseWords ALLCAPS MixedUP',
      "emoji 😀👍🏽🇳🇴 and <|endoftext|> look-alikes; I'M sure THEY'LL, we'VE, you'RE, it'S ",
      'a'.repeat(1000),
      ' '.repeat(300) + 'x',
      '\n'.repeat(50) + '/'.repeat(40),
      '語'.repeat(500),
      '1234567890'.repeat(30),
    ].join('');
    expect(scanned(text)).toEqual(regex(text));
  });
});
