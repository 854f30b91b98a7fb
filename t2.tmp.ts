import { encode } from 'gpt-tokenizer';
import { countText } from './src/core/tokenizer.js';
const P = { disallowedSpecial: new Set<string>() };
countText('b'.repeat(1000));
const cpu = (f: () => unknown) => { const c = process.cpuUsage(); f(); const d = process.cpuUsage(c); return ((d.user + d.system) / 1000).toFixed(0); };
const rnd = (n: number) => Array.from({length:n}, () => String.fromCharCode(97 + Math.floor(Math.random()*26))).join('');
const prose = 'The quick brown fox jumps over the lazy dog, and then it runs away! 1234 times. ';
const big = prose.repeat(Math.ceil(1048576/prose.length));
for (let i = 0; i < 2; i++) {
  console.log('a', cpu(() => countText('a'.repeat(1 << 20))), 'rnd', cpu(() => countText(rnd(1 << 20))), 'cjk', cpu(() => countText('語'.repeat(1 << 18))), 'prose new', cpu(() => countText(big)), 'prose lib', cpu(() => encode(big, P)), 'a 16K lib', cpu(() => encode('a'.repeat(16384), P)));
}
