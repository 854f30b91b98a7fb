import { describe, expect, it } from 'vitest';
import { RegionCache } from './region-cache.js';

describe('RegionCache', () => {
  it('makes a value once per stretch of text and finds it again from any string holding it', () => {
    const cache = new RegionCache<string>(100);
    const made: string[] = [];
    const make = (key: string) => (made.push(key), key.toUpperCase());
    expect(cache.get('hello world', 0, 5, make)).toBe('HELLO');
    expect(cache.get('hello world', 6, 11, make)).toBe('WORLD');
    expect(cache.get('say hello', 4, 9, make)).toBe('HELLO');
    expect(cache.get('worlds', 0, 5, make)).toBe('WORLD');
    expect(made).toEqual(['hello', 'world']);
  });

  it('tells apart stretches of one length and the empty stretch, entry 0 included', () => {
    const cache = new RegionCache<number>(1000);
    let n = 0;
    const make = () => n++;
    const words = Array.from({ length: 500 }, (_, i) => `w${i.toString(36)}`);
    const first = words.map((w) => cache.get(w, 0, w.length, make));
    expect(first).toEqual(words.map((_, i) => i));
    expect(words.map((w) => cache.get(` ${w} `, 1, w.length + 1, make))).toEqual(first);
    expect(cache.get('abc', 1, 1, make)).toBe(500);
    expect(cache.get('', 0, 0, make)).toBe(500);
  });

  it('starts over when full, and still answers', () => {
    const cache = new RegionCache<string>(2);
    let made = 0;
    const make = (key: string) => (made++, key);
    for (const w of ['a', 'b', 'c', 'a', 'b', 'c']) expect(cache.get(w, 0, 1, make)).toBe(w);
    expect(made).toBe(6);
    expect(cache.get('c', 0, 1, make)).toBe('c');
    expect(made).toBe(6);
  });
});
