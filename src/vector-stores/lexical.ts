/**
 * Words for lexical ranking (index-core.ts) and the built-in embedder: runs of letters and digits, lowercased
 * (Unicode-aware), minus a short list of English function words that carry no meaning for retrieval.
 */
const WORD = /[\p{L}\p{N}]+/gu;
/** The longest word kept (in UTF-16 units): a longer run is an identifier, a hash or base64, not a word. */
export const LONGEST = 48;

const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this those to was we were what when ' +
    'where which who whom why will with would you your'
  ).split(' '),
);

/** Whether `w` (lowercased) is one of the function words `words` leaves out. */
export const isStopword = (w: string): boolean => STOPWORDS.has(w);
/** The longest function word's length: a longer run is never one. */
export const LONGEST_STOPWORD = Math.max(...[...STOPWORDS].map((w) => w.length));

/** The words of a text that count for retrieval, in order. */
export function words(text: string): string[] {
  // match() with the global flag gives the runs themselves, without a match object each.
  const runs = text.toLowerCase().match(WORD);
  if (!runs) return [];
  const out: string[] = [];
  for (const w of runs) if (w.length <= LONGEST && !STOPWORDS.has(w)) out.push(w);
  return out;
}
