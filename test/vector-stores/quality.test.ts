import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { uploadFile } from './upload.js';

/**
 * Retrieval quality on documents nobody here wrote: the manual pages of Debian's coreutils (an essential
 * package, on every Debian machine and CI run). Each page is indexed without its NAME section, and the
 * one-line description there ("sort lines of text files") is the question whose answer is that page.
 * Reports recall@5 and MRR@10; the floors are what the ranking reached when this test was written
 * (docs/files.md, "Retrieval quality"), so a change that ranks worse fails here. The same store is also
 * searched the way large stores are (--search-approximate-from 1: int8 vectors, candidates rescored), held to
 * the same floors.
 */
/** What the ranking reached on coreutils 9.1-1 (104 pages), before and after issue 38's change alike: 0.779 and 0.609. */
const RECALL5_FLOOR = 0.77;
const MRR_FLOOR = 0.6;

const pages = (() => {
  if (!existsSync('/var/lib/dpkg/info/coreutils.list')) return [];
  return readFileSync('/var/lib/dpkg/info/coreutils.list', 'utf8')
    .split('\n')
    .filter((p) => /\/man1\/[^/]+\.1\.gz$/.test(p) && existsSync(p));
})();

/** A man page's text without roff markup, and the description its NAME section gives. */
function manText(path: string): { name: string; question: string; text: string } | undefined {
  const roff = gunzipSync(readFileSync(path)).toString('utf8');
  const lines = roff.split('\n');
  const nameAt = lines.findIndex((l) => /^\.SH\s+"?NAME/.test(l));
  const nameLine = lines[nameAt + 1] ?? '';
  const m = /^(.+?)\s+\\-\s+(.+)$/.exec(nameLine);
  if (!m) return undefined;
  const text = lines
    .filter((_, i) => i !== nameAt && i !== nameAt + 1)
    .filter((l) => !l.startsWith('.\\"'))
    .map((l) => (l.startsWith('.') ? l.replace(/^\.\S+\s*/, '') : l))
    .join('\n')
    .replace(/\\f[BIRP]|\\[,/]|\\\(..|\\&/g, '')
    .replace(/\\-/g, '-');
  return { name: m[1].replace(/\\-/g, '-'), question: m[2], text };
}

describe.runIf(pages.length >= 50).each([
  ['exact', undefined],
  ['approximate', 1],
])('retrieval quality on coreutils manual pages (%s)', (mode, searchApproximateFrom) => {
  let s: TestStandin;
  const docs = pages.map(manText).filter((d): d is NonNullable<typeof d> => !!d);
  const fileOf = new Map<string, string>();
  beforeAll(async () => {
    // Every store's index is saved (--search-index-save-from 1): the second pass reads it back.
    s = await startTestStandin({
      settings: { searchIndexSaveFrom: 1, ...(searchApproximateFrom === undefined ? {} : { searchApproximateFrom }) },
    });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('finds the page a description belongs to (recall@5, MRR@10)', async () => {
    for (const d of docs) fileOf.set(await uploadFile(s, `${d.name}.txt`, d.text), d.name);
    const store = await s.req('POST', '/v1/vector_stores', { key: 'platform', body: { name: 'coreutils', file_ids: [...fileOf.keys()] } });
    await s.ctx.jobs.drain(300_000);
    let found5 = 0;
    let rr = 0;
    const storeId = (store.body as { id: string }).id;
    const ask = (question: string) =>
      s.req('POST', `/v1/vector_stores/${storeId}/search`, { key: 'platform', body: { query: question, max_num_results: 10 } });
    const answers: unknown[] = [];
    for (const d of docs) {
      const res = await ask(d.question);
      answers.push(res.body);
      const names = (res.body as { data: { file_id: string }[] }).data.map((h) => fileOf.get(h.file_id));
      const rank = names.indexOf(d.name) + 1;
      if (rank >= 1 && rank <= 5) found5++;
      if (rank >= 1) rr += 1 / rank;
    }
    const recall5 = found5 / docs.length;
    const mrr = rr / docs.length;
    console.log(
      `${mode}: coreutils ${execFileSync('dpkg-query', ['-W', '-f', '${Version}', 'coreutils'])}: ${docs.length} pages, recall@5 ${recall5.toFixed(3)}, MRR@10 ${mrr.toFixed(3)}`,
    );
    expect(recall5).toBeGreaterThanOrEqual(RECALL5_FLOOR);
    expect(mrr).toBeGreaterThanOrEqual(MRR_FLOOR);

    // The store's saved index, read by a new search worker, answers every question exactly as before.
    const dir = join(s.ctx.settings.data, 'search-indexes');
    for (let i = 0; i < 200 && !readdirSync(dir).some((f) => f.endsWith(`${storeId}.idx`)); i++)
      await new Promise((r) => setTimeout(r, 50));
    const indexes = s.ctx.services.vectorStores.indexes;
    await indexes.close();
    const again = [];
    for (const d of docs) again.push((await ask(d.question)).body);
    expect(indexes.stats()).toMatchObject({ restores: 1, fullLoads: 1 });
    expect(again).toEqual(answers);
  }, 600_000);
});
