import type { ChatTool } from './types.js';

/**
 * file_search as a model sees it: a function (`file_search` with a `query`) that Standin executes itself
 * (the run names it in `ChatRequest.retrieval`), and its result as the text of the tool message — each
 * result under a marker `【m:i†source】` (m: the run's m-th search, i: the result's rank) that the model
 * copies into its answer to cite it. The built-in provider reads the same text back (`parseFileSearchOutput`).
 */

/** The function offered for file_search (its name may differ when a function of the run already has it). */
export const FILE_SEARCH_FUNCTION: ChatTool['function'] = {
  name: 'file_search',
  description:
    'Search the files attached to this conversation and to the assistant. Returns passages, each under a marker like ' +
    '【0:0†source】; when you use a passage, put its marker right after the statement it supports.',
  parameters: {
    type: 'object',
    properties: { query: { type: 'string', description: 'What to look for, in a few words.' } },
    required: ['query'],
  },
};

/** One result as the model sees it. */
export interface FileSearchPassage {
  fileName: string;
  score: number;
  text: string;
}

const NO_RESULTS = 'No results found in the files.';
const MARKER_LINE = /^(【\d+:\d+†source】) .*$/gm;

/** The marker of result `i` of search `m`. */
export const citationMarker = (m: number, i: number) => `【${m}:${i}†source】`;

/** The tool message of search `m`: each passage under its marker line (`【m:i†source】 <file name> (score …)`). */
export function formatFileSearchOutput(m: number, passages: readonly FileSearchPassage[]): string {
  if (!passages.length) return NO_RESULTS;
  return passages.map((p, i) => `${citationMarker(m, i)} ${p.fileName} (score ${p.score.toFixed(3)})\n${p.text}`).join('\n\n');
}

/** The passages of a file_search tool message, in rank order, each with its marker. */
export function parseFileSearchOutput(output: string): { marker: string; text: string }[] {
  const heads = [...output.matchAll(MARKER_LINE)];
  return heads.map((h, k) => {
    const start = h.index + h[0].length + 1;
    const end = k + 1 < heads.length ? heads[k + 1].index : output.length;
    return { marker: h[1], text: output.slice(start, end).trim() };
  });
}

/** The query of a file_search call: `query` of its JSON arguments, else the arguments as text. */
export function queryOf(args: string | undefined): string {
  try {
    const parsed: unknown = JSON.parse(args ?? '');
    if (typeof parsed === 'object' && parsed !== null && 'query' in parsed && typeof parsed.query === 'string') return parsed.query;
  } catch {
    /* not JSON: the text itself */
  }
  return (args ?? '').trim();
}

/** The markers `【m:i†…】` a model copied into a text (as runs read them), with where each starts. */
export function citationMarkers(text: string): { m: number; i: number; index: number; marker: string }[] {
  return [...text.matchAll(/【(\d+):(\d+)†[^】\n]*】/g)].map((x) => ({ m: Number(x[1]), i: Number(x[2]), index: x.index, marker: x[0] }));
}
