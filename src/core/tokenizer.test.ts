import { decode, encode } from 'gpt-tokenizer';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { describe, expect, it } from 'vitest';
import { countText, decodeTokens, encodePieces, encodeText, mergeLong, mergeShort, tokenEnds, vocabulary } from './tokenizer.js';
import { random } from '../../test/random.js';

const PLAIN = { disallowedSpecial: new Set<string>() };
const MiB = 1 << 20;
// gpt-tokenizer needs minutes for one 1 MiB run (quadratic); linear tokenizing needs well under a second.
// The bound is generous for a loaded machine: it tells linear from quadratic, it is not a benchmark.
const LINEAR = 15_000;

const draw = (n: number, pick: (r: number) => string, seed = 7) => {
  const r = random(seed);
  return Array.from({ length: n }, () => pick(r())).join('');
};
const lower = (r: number) => String.fromCharCode(97 + Math.floor(r * 26));
const cjk = (r: number) => String.fromCharCode(0x4e00 + Math.floor(r * 20_000));
const emoji = (r: number) => String.fromCodePoint(0x1f300 + Math.floor(r * 700));

const prose = [
  'The quick brown fox jumps over the lazy dog. ',
  "It's 2026: the run's 1,234,567 tokens cost $12.50 (or 11,90 €)!\n\n",
  '    indented code { return a[i] + b[j]; }\r\n',
  'Ünïcödé wörds, 日本語のテキスト。中文文本，한국어 텍스트. ',
  'URLs like https://example.com/a/b?c=d&e=f#g and emails a.b@c.de; ',
  'CamelCaseWords ALLCAPS MixedUP and  double  spaces\ttabs\t\n',
  'emoji 😀👍🏽🇳🇴 and <|endoftext|> look-alikes. ',
].join('');

describe('linear o200k tokenizing', () => {
  it('merges short pre-tokens as gpt-tokenizer does, its pairs remembered from one to the next', () => {
    const texts = [
      prose,
      draw(40, lower, 1),
      draw(30, cjk, 2),
      draw(20, emoji, 3),
      ' 0123456789abcdef',
      'e3b0c44298fc1c149afbf4c8996fb924',
      '<debian-devel@lists.debian.org>',
      ...Array.from({ length: 300 }, (_, i) => draw(1 + (i % 23), (r) => (r < 0.5 ? lower(r * 2) : r < 0.8 ? cjk(r) : emoji(r)), i)),
    ];
    // mergeShort takes one pre-token: the texts cut as gpt-tokenizer cuts them.
    const pieces = texts.flatMap((t) => t.match(new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'gu')) ?? []);
    expect(pieces.length).toBeGreaterThan(300);
    // Twice: the second pass meets every pair already remembered.
    for (let pass = 0; pass < 2; pass++) for (const piece of pieces) expect(mergeShort(piece)).toEqual(encode(piece, PLAIN));
  });

  it('gives gpt-tokenizer’s tokens exactly for ordinary text, and decodes back to it', () => {
    const text = prose.repeat(200);
    expect(encodeText(text)).toEqual(encode(text, PLAIN));
    expect(countText(text)).toBe(encode(text, PLAIN).length);
    expect(decodeTokens(encodeText(text))).toBe(text);
    expect(encodeText('')).toEqual([]);
    expect(countText('hello')).toBe(1);
  });

  it.each([
    ['a run of one letter', 'a'.repeat(3000)],
    ['a run of brackets', '['.repeat(3000)],
    ['a run of digits', '7'.repeat(3000)],
    ['a run of one emoji', '😀'.repeat(1500)],
    ['a run of a rare emoji (byte tokens)', '🦩'.repeat(1500)],
    ['a run of one CJK character', '語'.repeat(3000)],
    ['a run of spaces', ' '.repeat(3000) + 'x'],
    ['a run of newlines', '\n'.repeat(3000)],
    ['a run of capitals', 'A'.repeat(3000) + 'b'],
    ['random letters without spaces', draw(3000, lower)],
    ['random CJK without punctuation', draw(2000, cjk)],
    ['random emoji', draw(1000, emoji)],
    ['long runs inside prose', `${prose} ${draw(700, lower, 3)}   ${'['.repeat(600)}\n\n ${' '.repeat(400)}${prose}`],
  ])('gives gpt-tokenizer’s tokens exactly for %s (long pre-tokens take the heap merge)', (_name, text) => {
    const tokens = encodeText(text);
    expect(tokens).toEqual(encode(text, PLAIN));
    expect(decodeTokens(tokens)).toBe(text);
  });

  // Each run repeats a period gpt-tokenizer merges alike, so 128 times 8 KiB holds 128 times its tokens.
  it.each([
    ['a', 'a'],
    ['[', '['],
    ['digits', '777'],
    ['emoji', '😀'],
    ['CJK', '語'],
  ])(
    'counts 1 MiB of one %s in linear time, as gpt-tokenizer counts it',
    (_name, unit) => {
      const small = unit.repeat(Math.floor(8192 / unit.length));
      const big = small.repeat(128);
      expect(big.length).toBeGreaterThan(MiB - 300);
      expect(countText(big)).toBe(encode(small, PLAIN).length * 128);
    },
    LINEAR,
  );

  it(
    'counts 1 MiB of random letters without a space, and of nested brackets, in linear time',
    () => {
      const letters = draw(MiB, lower);
      expect(decodeTokens(encodeText(letters))).toBe(letters);
      const nested = '['.repeat(MiB / 2) + ']'.repeat(MiB / 2);
      expect(countText(nested)).toBe(2 * countText('['.repeat(MiB / 2)));
    },
    LINEAR,
  );

  it(
    'merges a pre-token over 256 K characters in blocks, the count within two tokens a block edge of one whole merge',
    () => {
      const run = draw(600_000, lower, 11);
      const blocks = [...encodePieces(run)];
      expect(blocks).toHaveLength(3);
      expect(Math.abs(blocks.flat().length - mergeLong(run).length)).toBeLessThanOrEqual(4);
      expect(decodeTokens(blocks.flat())).toBe(run);
      // A block edge never splits a surrogate pair.
      const emoji = `#${'😀'.repeat(140_000)}`;
      expect(emoji.charCodeAt(262_144) & 0xfc00).toBe(0xdc00);
      expect(decodeTokens(encodeText(emoji))).toBe(emoji);
    },
    LINEAR,
  );

  it('hands the tokens out in bounded pieces, so a caller can stop early', () => {
    const text = 'word '.repeat(100_000) + 'z'.repeat(300_000);
    const pieces = [...encodePieces(text)];
    expect(pieces.length).toBeGreaterThan(4);
    expect(pieces.flat()).toEqual(encodeText(text));
  });

  it('decodes a window cut inside a character without borrowing bytes from another call', () => {
    const tokens = encode('🦩🦩', PLAIN);
    expect(tokens.length).toBeGreaterThan(2);
    expect(decodeTokens(tokens.slice(0, 1))).toMatch(/^\uFFFD+$/);
    expect(decodeTokens(encode('ok', PLAIN))).toBe('ok');
    // Special tokens decode to their names; an unknown id throws.
    expect(decodeTokens([encode('<|endoftext|>', { allowedSpecial: 'all' })[0]])).toBe(decode([199_999]));
    expect(() => decodeTokens([300_000])).toThrow();
    expect(() => decodeTokens([1.5])).toThrow();
    expect(() => decodeTokens([-1])).toThrow();
  });
});

describe('texts of every kind', () => {
  it('gives gpt-tokenizer’s tokens for pre-tokens of every length up to LONG, of every script, with lone surrogates', () => {
    const kinds = [
      lower,
      cjk,
      emoji,
      (r: number) => String.fromCharCode(0x400 + Math.floor(r * 200)),
      (r: number) => '0123456789.,;:!?-_/\\[]{}'[Math.floor(r * 24)],
    ];
    const texts = Array.from({ length: 60 }, (_, i) => {
      const r = random(100 + i);
      let text = '';
      while (text.length < 2000) {
        // Runs of one kind from 1 to 300 characters (merged by mergeShort up to 48 bytes, by mergeLong above, by blocks past LONG).
        const length = 1 + Math.floor(r() ** 3 * 300);
        const kind = kinds[Math.floor(r() * kinds.length)];
        text +=
          draw(length, kind, i * 1000 + text.length) +
          [' ', '\n', '\r\n', '  ', '\t', "'s ", '\ud800', '\udc00x', '<|endoftext|>'][Math.floor(r() * 9)];
      }
      return text;
    });
    for (const text of texts) {
      expect(encodeText(text)).toEqual(encode(text, PLAIN));
      expect(tokenEnds(text, 1e6)?.count).toBe(encode(text, PLAIN).length);
    }
  });
});

describe('long pre-tokens among short ones', () => {
  it('finds long pre-tokens made of mixed kinds: a punctuation run with a \\n/ tail, mixed whitespace', () => {
    for (const text of [`x.${'\n/'.repeat(400)}y`, `a${' \u2000\u3000'.repeat(200)}b`, `${prose}${'-'.repeat(130)}${prose}`])
      expect(encodeText(text)).toEqual(encode(text, PLAIN));
  });
});

/** Where gpt-tokenizer's tokens of `text` end, in bytes of its UTF-8. */
function referenceEnds(text: string): number[] {
  let at = 0;
  return encode(text, { disallowedSpecial: new Set() }).map((t) => (at += vocabulary().lengths[t]));
}

/** Texts of about 3,000 units of every kind: every script, emoji, lone surrogates, long pre-tokens. */
const mixedTexts = (count: number) => {
  const kinds = [lower, cjk, emoji, (r: number) => '0123456789.,;:!?-_/\\[]{}'[Math.floor(r * 24)]];
  return Array.from({ length: count }, (_, i) => {
    const r = random(300 + i);
    let text = '';
    while (text.length < 3000)
      text +=
        draw(1 + Math.floor(r() ** 3 * 400), kinds[Math.floor(r() * kinds.length)], i * 1000 + text.length) +
        [' ', '\n', '\r\n', '  ', '\t', "'s ", "'LL ", '\ud800', '\udc00x', '<|endoftext|>', 'ǅungla '][Math.floor(r() * 11)];
    return text;
  });
};

describe('token ends', () => {
  it('ends tokens where gpt-tokenizer does on texts of every kind: every script, emoji, lone surrogates, long pre-tokens', () => {
    const texts = mixedTexts(40);
    for (const text of [...texts, prose, `x.${'\n/'.repeat(400)}y`, `a${' \u2000\u3000'.repeat(200)}b`, '', ' ', '😀']) {
      const got = tokenEnds(text, 1e6)!;
      expect(Array.from(got.ends.subarray(0, got.count))).toEqual(referenceEnds(text));
    }
  });

  it('ends tokens where gpt-tokenizer does past the cache of pre-tokens starting over, and again from it', () => {
    let seed = 5;
    const r = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
    // More distinct pre-tokens (random words) than the cache holds (200,000), among repeated ones.
    const words: string[] = [];
    for (let i = 0; i < 230_000; i++) {
      let w = ' ';
      for (let j = 3 + Math.floor(r() * 6); j > 0; j--) w += String.fromCharCode(97 + Math.floor(r() * 26));
      words.push(w);
      if (i % 1000 === 0) words.push(' ünïcödé 日本語 😀\n the of and');
    }
    const text = words.join('');
    const expected = referenceEnds(text);
    for (let pass = 0; pass < 2; pass++) {
      const got = tokenEnds(text, 5_000_000)!;
      expect(got.count).toBe(expected.length);
      // Compared as one string: toEqual over 1.5 million numbers takes seconds.
      expect(got.ends.subarray(0, got.count).join()).toBe(expected.join());
    }
  });

  it('ends tokens where gpt-tokenizer does across the stretches of a long text that the look-ups copy, and between two texts', () => {
    // Over 5 stretches of 65,792 units: pre-tokens of every kind on their edges.
    const text = mixedTexts(40).join('').repeat(3);
    const got = tokenEnds(text, 5_000_000)!;
    expect(got.ends.subarray(0, got.count).join()).toBe(referenceEnds(text).join());
    // Two texts' pieces taken in turns, the ends of a third (longer) made between them: each as it is alone.
    // Texts without long pre-tokens, whose pieces are few (a segment each); the second with its units reversed (lone surrogates).
    const [a, b, c] = [prose.repeat(500), prose.split('').reverse().join('').repeat(600), `${prose}\ud800`.repeat(900)];
    const [pa, pb] = [encodePieces(a), encodePieces(b)];
    const [ta, tb]: number[][] = [[], []];
    const ends = referenceEnds(c).join();
    for (let done = false; !done;) {
      const na = pa.next();
      if (!na.done) ta.push(...na.value);
      const got = tokenEnds(c, 1e6)!;
      expect(got.ends.subarray(0, got.count).join()).toBe(ends);
      const nb = pb.next();
      if (!nb.done) tb.push(...nb.value);
      done = !!na.done && !!nb.done;
    }
    expect(ta).toEqual(encode(a, PLAIN));
    expect(tb).toEqual(encode(b, PLAIN));
  });

  it('stops past the most tokens it may read, in short pre-tokens and in a long one', () => {
    expect(tokenEnds(' word'.repeat(100), 99)).toBeUndefined();
    expect(tokenEnds(' word'.repeat(100), 100)?.count).toBe(100);
    const long = `${' word'.repeat(10)} ${'日本'.repeat(500)}`;
    const all = referenceEnds(long).length;
    expect(tokenEnds(long, all - 1)).toBeUndefined();
    expect(tokenEnds(long, all)?.count).toBe(all);
  });
});
