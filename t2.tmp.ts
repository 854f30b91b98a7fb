import { countText } from './src/core/tokenizer.js';
countText('b'.repeat(1000));
const rnd = (n: number) => Array.from({length:n}, () => String.fromCharCode(97 + Math.floor(Math.random()*26))).join('');
const s = rnd(1<<20);
for (let i = 0; i < 3; i++) { const t = performance.now(); countText("a".repeat(1<<20)); console.log((performance.now() - t).toFixed(0)); }
