import { randomBytes, randomFillSync } from 'node:crypto';
import type { Clock } from './clock.js';

/**
 * Ids are a type prefix and a time-ordered random part (`thread_…`, `msg_…`), so sorting by id sorts by
 * creation and an id serves as a list cursor. The part after the prefix is 24 characters of a
 * lexicographically ordered base-32 alphabet: 10 for the millisecond time, 14 random. Within one
 * millisecond the random part is incremented, keeping ids from one process strictly increasing.
 */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
let lastMs = -1;
let lastRand: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/**
 * Random bytes drawn from the system's generator ahead of use, 4 KiB at a time: a call into it per id cost
 * more than the rest of the id (the ads create, bench/profile.mjs). Each byte is used once.
 */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

function randomDigits(): number[] {
  if (poolAt + 14 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const digits = new Array<number>(14);
  // 256 is a multiple of 32: each digit is uniform.
  for (let i = 0; i < 14; i++) digits[i] = pool[poolAt++] % 32;
  return digits;
}

function increment(digits: number[]): number[] {
  const next = digits.slice();
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] < 31) {
      next[i]++;
      return next;
    }
    next[i] = 0;
  }
  return randomDigits();
}

export function newIdAt(prefix: string, ms: number): string {
  if (ms <= lastMs) {
    lastRand = increment(lastRand);
    ms = lastMs;
  } else {
    lastMs = ms;
    lastRand = randomDigits();
  }
  let random = '';
  for (const d of lastRand) random += ALPHABET[d];
  return `${prefix}_${encodeTime(ms)}${random}`;
}

/** A new id with the given prefix, ordered by the Standin clock. */
export function newId(prefix: string, clock: Clock): string {
  return newIdAt(prefix, clock.now());
}

/** A secret: prefix + 48 url-safe random characters (API keys, admin keys). */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(36).toString('base64url')}`;
}

/** The characters after an id's prefix: the base-32 tail above, or a name a config file or the seed chose (`proj_demo`). */
const ID_TAIL = '[A-Za-z0-9_-]{1,128}';

/** The ids of one kind: `idPattern('thread')` matches `thread_…`; files use a dash (`idPattern('file', '-')`). */
export function idPattern(prefix: string, separator = '_'): RegExp {
  return new RegExp(`^${prefix}${separator}${ID_TAIL}$`);
}

/** The ids of uploaded files, `file-…` as on the platform. */
export const FILE_ID = idPattern('file', '-');
