import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One fenced code block of a Markdown page: its language and its lines (1-based line of the first). */
export interface Fence {
  lang: string;
  line: number;
  lines: string[];
}

/** A command as a page shows it: where, and its text (a fenced command joined over its continuation lines). */
export interface Shown {
  file: string;
  line: number;
  text: string;
  where: 'fence' | 'inline';
}

/** The pages whose commands a user pastes: README.md and docs/*.md. */
export function pages(root: string): { file: string; text: string }[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs].map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }));
}

/** The fenced code blocks of a page. */
export function fences(markdown: string): Fence[] {
  const out: Fence[] = [];
  let open: Fence | null = null;
  markdown.split('\n').forEach((text, i) => {
    const mark = /^\s*```\s*(\S*)/.exec(text);
    if (mark && !open) open = { lang: mark[1], line: i + 2, lines: [] };
    else if (mark && open) {
      out.push(open);
      open = null;
    } else open?.lines.push(text);
  });
  return out;
}

/**
 * Splits a shell block into commands: a line ending in `\` goes on, and so does a single-quoted string
 * left open (a JSON body over several lines). Blank lines and comment lines are dropped.
 */
export function shellCommands(fence: Fence): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let current: { line: number; text: string } | null = null;
  fence.lines.forEach((raw, i) => {
    if (!current) {
      if (!raw.trim() || raw.trim().startsWith('#')) return;
      current = { line: fence.line + i, text: raw };
    } else current.text += '\n' + raw;
    const quotes = (current.text.replace(/"[^"']*"/g, '').match(/'/g) ?? []).length;
    if (raw.endsWith('\\') || quotes % 2 === 1) return;
    out.push(current);
    current = null;
  });
  if (current) out.push(current);
  return out;
}

/** A command of Standin's command line, after any `VAR=value` prefixes. */
export const COMMAND = /^(?:[A-Z][A-Z0-9_]*=\S*\s+)*(?:standin|node dist\/main\.js|npx standin)(?=\s+\S)/;

/** Every command of Standin a page shows, in fenced blocks and in inline code. */
export function shownCommands(file: string, markdown: string): Shown[] {
  const out: Shown[] = [];
  const lines = markdown.split('\n');
  const inFence = new Set<number>();
  for (const f of fences(markdown)) {
    for (let l = f.line - 1; l <= f.line + f.lines.length; l++) inFence.add(l);
    for (const c of shellCommands(f))
      if (COMMAND.test(c.text.trim())) out.push({ file, line: c.line, text: c.text.trim(), where: 'fence' });
  }
  // Inline code may wrap onto the next line of its paragraph.
  const prose = lines.map((l, i) => (inFence.has(i + 1) ? '' : l)).join('\n');
  for (const m of prose.matchAll(/`([^`]+)`/g)) {
    const text = m[1].replace(/\s*\n\s*/g, ' ').trim();
    if (COMMAND.test(text)) out.push({ file, line: prose.slice(0, m.index).split('\n').length, text, where: 'inline' });
  }
  return out;
}

/** The shell blocks of one section of a page (from its `## heading` to the next heading of that level). */
export function sectionShellBlocks(markdown: string, heading: string): Fence[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section '## ${heading}'`);
  const end = markdown.indexOf('\n## ', start + 1);
  const before = markdown.slice(0, start).split('\n').length;
  return fences(markdown.slice(start, end < 0 ? undefined : end))
    .filter((f) => f.lang === 'sh')
    .map((f) => ({ ...f, line: f.line + before - 1 }));
}
