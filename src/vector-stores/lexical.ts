/**
 * Words for lexical ranking and the built-in embedder: runs of letters and digits, lowercased
 * (Unicode-aware), minus a short list of English function words that carry no meaning for retrieval.
 */
const WORD = /[\p{L}\p{N}]+/gu;
const LONGEST = 48;

const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this those to was we were what when ' +
    'where which who whom why will with would you your'
  ).split(' '),
);

/** The words of a text that count for retrieval, in order. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORD)) {
    const w = m[0];
    if (w.length <= LONGEST && !STOPWORDS.has(w)) out.push(w);
  }
  return out;
}

/** BM25's parameters (the usual ones). */
const K1 = 1.2;
const B = 0.75;

/** An inverted index of chunks: for each word, the chunks holding it and how often. */
export interface LexicalIndex {
  n: number;
  /** Per chunk, BM25's length normalization k1·(1 − b + b·length/average). */
  norms: Float32Array;
  postings: Map<string, { docs: Int32Array; tfs: Uint16Array }>;
}

/** Builds the index from each chunk's words (chunk i is `docs[i]`). */
export function buildLexicalIndex(docs: readonly string[][]): LexicalIndex {
  const lists = new Map<string, { docs: number[]; tfs: number[] }>();
  const lengths = new Uint32Array(docs.length);
  let total = 0;
  docs.forEach((ws, i) => {
    lengths[i] = ws.length;
    total += ws.length;
    const counts = new Map<string, number>();
    for (const w of ws) counts.set(w, (counts.get(w) ?? 0) + 1);
    for (const [w, tf] of counts) {
      let list = lists.get(w);
      if (!list) lists.set(w, (list = { docs: [], tfs: [] }));
      list.docs.push(i);
      list.tfs.push(Math.min(tf, 65_535));
    }
  });
  const postings = new Map<string, { docs: Int32Array; tfs: Uint16Array }>();
  for (const [w, l] of lists) postings.set(w, { docs: Int32Array.from(l.docs), tfs: Uint16Array.from(l.tfs) });
  const avg = docs.length && total ? total / docs.length : 1;
  const norms = Float32Array.from(lengths, (len) => K1 * (1 - B + (B * len) / avg));
  return { n: docs.length, norms, postings };
}

/**
 * BM25 of every chunk for the query's words, scaled into 0..1: divided by what a chunk would score that
 * held every query word infinitely often (each word's ceiling is idf·(k1+1)). So 1 is approached only by
 * chunks that hold all of the query's words, and a word found nowhere lowers every score.
 * Adds `weight ·` that score into `out` (one entry per chunk).
 */
export function addBm25(index: LexicalIndex, queryWords: readonly string[], weight: number, out: Float32Array): void {
  const unique = [...new Set(queryWords)];
  if (!unique.length || !index.n) return;
  let ceiling = 0;
  const terms: { idf: number; p?: { docs: Int32Array; tfs: Uint16Array } }[] = [];
  for (const w of unique) {
    const p = index.postings.get(w);
    const df = p?.docs.length ?? 0;
    const idf = Math.log(1 + (index.n - df + 0.5) / (df + 0.5));
    ceiling += idf * (K1 + 1);
    terms.push({ idf, p });
  }
  const scale = weight / ceiling;
  for (const { idf, p } of terms) {
    if (!p) continue;
    const factor = scale * idf * (K1 + 1);
    for (let j = 0; j < p.docs.length; j++) {
      const d = p.docs[j];
      const tf = p.tfs[j];
      out[d] += (factor * tf) / (tf + index.norms[d]);
    }
  }
}
