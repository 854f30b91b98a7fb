// The tokenizer's ranks as the file a start reads (src/core/vocabulary.ts): gpt-tokenizer's module of
// o200k's ranks, written as the token count, each token's length and their bytes. scripts/build.mjs
// bundles and runs it.
// Usage (bundled): node o200k.js dist/o200k.bin
import { writeFileSync } from 'node:fs';
import ranks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { encodeVocabulary, vocabularyOfRanks } from '../src/core/vocabulary.js';

const out = process.argv[2];
if (!out) throw new Error('usage: o200k.js OUT.bin');
writeFileSync(out, encodeVocabulary(vocabularyOfRanks(ranks)));
