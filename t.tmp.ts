import { encode, decode } from 'gpt-tokenizer';
import { encodeText, countText, decodeTokens } from './src/core/tokenizer.js';
const P = { disallowedSpecial: new Set<string>() };
const rnd = (n: number, f: () => string) => Array.from({length:n}, f).join('');
const letters = () => String.fromCharCode(97 + Math.floor(Math.random()*26));
const cjk = () => String.fromCharCode(0x4e00 + Math.floor(Math.random()*20000));
const emo = () => String.fromCodePoint(0x1f300 + Math.floor(Math.random()*700));
const cases: [string,string][] = [
 ['a', 'a'.repeat(3000)], ['[', '['.repeat(3000)], ['emoji', '😀'.repeat(1500)], ['rare emoji', '🦩'.repeat(1500)], ['cjk', '語'.repeat(3000)],
 ['digits', '7'.repeat(3000)], ['spaces', ' '.repeat(3000)+'x'], ['nl', '\n'.repeat(3000)], ['mixedws', ' \t'.repeat(1500)+'y'], ['upper', 'A'.repeat(3000)+'b'],
 ['lower rnd', rnd(3000, letters)], ['cjk rnd', rnd(2000, cjk)], ['emo rnd', rnd(1000, emo)],
 ['prose+run', 'Hello there, friend.   ' + rnd(1000, letters) + '  and   ' + '['.repeat(700) + '\n\n  more text <|endoftext|> x' + ' '.repeat(500) + 'end'],
 ['thai', 'ภาษาไทยเป็นภาษาที่ไม่มีการเว้นวรรคระหว่างคำ'.repeat(40)],
];
for (const [name, s] of cases) {
  const want = encode(s, P); const got = encodeText(s);
  const same = want.length === got.length && want.every((t,i)=>t===got[i]);
  console.log(name, want.length, got.length, same ? 'SAME' : 'DIFF', decodeTokens(got) === s ? 'rt' : 'RT-FAIL', countText(s));
}
for (const n of [1<<20]) for (const [name, s] of [['a','a'.repeat(n)], ['[', '['.repeat(n)], ['emoji','😀'.repeat(n/2)], ['cjk','語'.repeat(n/3)], ['digits','7'.repeat(n)], ['lower rnd', rnd(n, letters)], ['cjk rnd', rnd(n/3, cjk)], ['spaces', ' '.repeat(n)], ['emo rnd', rnd(n/4, emo)]] as [string,string][]) {
  const t = performance.now(); const k = countText(s); const t2 = performance.now(); const d = decodeTokens(encodeText(s)); 
  console.log('1MiB', name, k, (t2-t).toFixed(0), 'ms', d === s, (performance.now()-t2).toFixed(0));
}
const prose = 'The quick brown fox jumps over the lazy dog, and then it runs away! 1234 times. ';
const big = prose.repeat(Math.ceil(1048576/prose.length));
let t = performance.now(); console.log('prose lib', encode(big, P).length, (performance.now()-t).toFixed(0));
t = performance.now(); console.log('prose new', countText(big), (performance.now()-t).toFixed(0));
const words: string[]=[]; for(let i=0;i<200000;i++) words.push('w'+(i*7919%100003).toString(36)); const varied=words.join(' ');
t = performance.now(); console.log('varied lib', encode(varied, P).length, (performance.now()-t).toFixed(0));
t = performance.now(); console.log('varied new', countText(varied), (performance.now()-t).toFixed(0));
