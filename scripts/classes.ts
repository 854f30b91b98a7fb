// The pre-tokenizer's table of character classes (src/core/pretokens.ts) as the file a start reads: one
// byte of class bits for each character of the Basic Multilingual Plane, tested against each class here,
// once, instead of for 50–60 ms of a server's thread at its first count. scripts/build.mjs bundles and
// runs it.
// Usage (bundled): node classes.js dist/classes.bin
import { writeFileSync } from 'node:fs';
import { classTable } from '../src/core/pretokens.js';

const out = process.argv[2];
if (!out) throw new Error('usage: classes.js OUT.bin');
writeFileSync(out, classTable());
