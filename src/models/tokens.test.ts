import { encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { countPrompt, countTokens, truncateToTokens } from './tokens.js';

const PLAIN = { disallowedSpecial: new Set<string>() };
const MiB = 1 << 20;
// gpt-tokenizer alone takes minutes on each of these (quadratic in a run without spaces); a generous bound.
const LINEAR = 15_000;

describe('token counts of chat input', () => {
  it('counts ordinary text as gpt-tokenizer does, and a special-token look-alike as text', () => {
    const text = 'The quick brown fox, 12345 times! Ünïcödé 日本語 😀\n\n  code { x[i] }';
    expect(countTokens(text)).toBe(encode(text, PLAIN).length);
    expect(countTokens('a <|endoftext|> b')).toBe(encode('a <|endoftext|> b', PLAIN).length);
    expect(countPrompt([{ role: 'user', content: text }])).toBe(3 + 3 + encode(text, PLAIN).length);
  });

  it('counts a longer text the same when it comes again, however many other texts came between', () => {
    const texts = Array.from({ length: 300 }, (_, i) => `Message ${i}: ${'the conversation so far, '.repeat(20 + (i % 7))}`);
    const fresh = texts.map((t) => encode(t, PLAIN).length);
    // Counted three times over (the later rounds from the cache), and with texts a byte apart from each other.
    for (let round = 0; round < 3; round++) expect(texts.map((t) => countTokens(t))).toEqual(fresh);
    const other = texts[5].replace('Message 5', 'Message 5!');
    expect(countTokens(other)).toBe(encode(other, PLAIN).length);
  });

  it.each([
    ['a', 'a'],
    ['[', '['],
    ['digit', '7'],
    ['emoji', '😀'],
  ])(
    'counts and truncates a 1 MiB message of one %s in linear time',
    (_name, unit) => {
      const text = unit.repeat(MiB / unit.length);
      expect(countTokens(text)).toBeGreaterThan(MiB / 16);
      const cut = truncateToTokens(text, 1000);
      expect(cut.cut).toBe(true);
      expect(text.startsWith(cut.text)).toBe(true);
      expect(countTokens(cut.text)).toBeLessThanOrEqual(1000);
    },
    LINEAR,
  );

  it('truncates inside a multi-byte character without leaving a replacement character', () => {
    const text = '🦩'.repeat(50);
    for (let max = 1; max < 12; max++) {
      const { text: kept, cut } = truncateToTokens(text, max);
      expect(cut).toBe(true);
      expect(text.startsWith(kept)).toBe(true);
    }
    expect(truncateToTokens('short', 10)).toEqual({ text: 'short', cut: false });
  });
});
