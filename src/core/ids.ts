import { randomBytes, randomFillSync } from 'node:crypto';
import type { Clock } from './clock.js';

/**
 * Ids are a type prefix and a time-ordered random part (`thread_…`, `msg_…`), so sorting by id sorts by
 * creation and an id serves as a list cursor. The part after the prefix is 24 characters of a
 * lexicographically ordered base-32 alphabet: 10 for the millisecond time, 14 random. Within one
 * millisecond the random part is incremented, keeping ids from one process strictly increasing.
 */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_DIGITS = 10;
const RANDOM_DIGITS = 14;

/**
 * Random bytes drawn from the system's generator ahead of use, 4 KiB at a time: a call into it per id cost
 * more than the rest of the id (the ads create, bench/profile.mjs). Each byte is used once.
 */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/**
 * The last id's part after the prefix, as its characters (`text`) and its random part's digits, changed in
 * place: an id is written into these bytes and read out as one string. Built a character at a time, as
 * strings, an id left 24 intermediate strings behind (about 800 bytes of garbage per id; the ads create's
 * allocation profile, docs/operations.md).
 */
const text = Buffer.alloc(TIME_DIGITS + RANDOM_DIGITS);
const digits = new Uint8Array(RANDOM_DIGITS);
let lastMs = -1;

function writeTime(ms: number): void {
  for (let i = TIME_DIGITS - 1; i >= 0; i--) {
    text[i] = ALPHABET.charCodeAt(ms % 32);
    ms = Math.floor(ms / 32);
  }
}

function randomDigits(): void {
  if (poolAt + RANDOM_DIGITS > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  // 256 is a multiple of 32: each digit is uniform.
  for (let i = 0; i < RANDOM_DIGITS; i++) digits[i] = pool[poolAt++] % 32;
}

/** The random part plus one; past its largest value, random again. */
function increment(): void {
  for (let i = RANDOM_DIGITS - 1; i >= 0; i--) {
    if (digits[i] < 31) {
      digits[i]++;
      return;
    }
    digits[i] = 0;
  }
  randomDigits();
}

export function newIdAt(prefix: string, ms: number): string {
  if (ms <= lastMs) increment();
  else {
    lastMs = ms;
    writeTime(ms);
    randomDigits();
  }
  for (let i = 0; i < RANDOM_DIGITS; i++) text[TIME_DIGITS + i] = ALPHABET.charCodeAt(digits[i]);
  return `${prefix}_${text.toString('latin1')}`;
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
