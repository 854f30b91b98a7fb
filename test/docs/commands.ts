import { COMMAND, type Shown } from './markdown.js';

/** What the test puts where a page shows a placeholder, given the servers it started. */
export interface Fixtures {
  /** The bridge tour over Streamable HTTP (`…/mcp`); its SSE endpoint is `…/sse`. */
  mcpUrl: string;
  /** Submission files the test wrote: the fixture that passes, and one listing exactly the tour's tools. */
  submission: string;
  submissionForTour: string;
  /** A fresh PostgreSQL database URL, when the run has PostgreSQL. */
  databaseUrl?: string;
}

const TOUR_SERVER = '"node examples/bridge-tour/server.mjs"';

/**
 * Placeholders of the pages and what stands in for them, applied in order. A placeholder not here stays,
 * and the command then fails as it would for a user who pasted it unchanged.
 */
export function placeholders(f: Fixtures): [shown: string | RegExp, use: string][] {
  return [
    ['<event-type>', 'batch.completed'],
    ['<type>', 'batch.completed'],
    ['[--project proj_…]', '--project proj_demo'],
    [`[--event-data '<json>']`, `--event-data '{"id":"batch_docs_example"}'`],
    // An MCP server: the bridge tour of examples/, as a local command or over HTTP.
    ['<server>', TOUR_SERVER],
    [/(apps open) <command>/, `$1 ${TOUR_SERVER}`],
    ['"node server.js"', TOUR_SERVER],
    ['http://localhost:3000/mcp', f.mcpUrl],
    ['http://localhost:3000/sse', f.mcpUrl.replace(/\/mcp$/, '/sse')],
    [/(apps lint) URL\b/, `$1 ${f.mcpUrl}`],
    ['chatgpt-app-submission.json', f.submission],
    [/(validate-submission) app\.json/, `$1 ${f.submissionForTour}`],
    // `standin apps …`: the command's own list of subcommands.
    [/ …$/, ' --help'],
    ...(f.databaseUrl ? ([['postgres://user@host/db', f.databaseUrl]] as [string, string][]) : []),
  ];
}

/** Commands named without the argument they need: the mention is checked with `--help`. */
export const NEED_AN_ARGUMENT = ['standin trigger', 'standin apps open', 'standin exec'];

/** Commands whose documented exit is not 0, and where the docs say so. */
export const DOCUMENTED_EXIT: { shown: string; exit: number; why: string }[] = [
  { shown: 'src/apps/lint/fixtures/bad-server.mjs', exit: 1, why: 'docs/apps.md: exit 1 when errors are found' },
];

/** Documented commands the test cannot run, each with its reason. */
export const NOT_RUN: { shown: string; why: string }[] = [
  {
    shown: 'STANDIN_DATA=/var/lib/standin/',
    why: 'the deploy recipe (system folders, PostgreSQL, Redis, nginx): test/deploy/deploy.test.ts runs it',
  },
  {
    shown: 'dashboard-link',
    why: "asks a running instance for a sign-in link with the operator's admin key: test/metrics/log-line.test.ts runs it against a served instance",
  },
];

/** What a command line is for the test: run to its end, or a server that runs until stopped. */
export type Plan =
  | { kind: 'run'; command: string; exit: number }
  | { kind: 'serve' | 'open'; env: Record<string, string>; command: string }
  | { kind: 'skip'; why: string };

/** Substitutes the placeholders and decides how to run one shown command. */
export function plan(shown: Shown, f: Fixtures): Plan {
  const skip = NOT_RUN.find((n) => shown.text.includes(n.shown));
  if (skip) return { kind: 'skip', why: skip.why };
  let command = shown.text.replace(/\s+#.*$/, '');
  for (const [from, to] of placeholders(f)) command = command.replace(from, to);
  if (/<[a-z-]+>/.test(command))
    throw new Error(`${shown.file}:${shown.line}: no value for the placeholder of '${command}': add it to placeholders()`);
  if (NEED_AN_ARGUMENT.includes(command)) command += ' --help';
  const [, assigns, rest] = /^((?:[A-Z][A-Z0-9_]*=\S*\s+)*)(.*)$/s.exec(command)!;
  const words = rest.replace(COMMAND, '').trim().split(/\s+/);
  const env = Object.fromEntries(
    assigns.trim()
      ? assigns
          .trim()
          .split(/\s+/)
          .map((a) => a.split(/=(.*)/s, 2))
      : [],
  );
  // Before anything runs: a line for PostgreSQL whose placeholder stayed (the run has no test database).
  if (env.STANDIN_DATABASE_URL?.startsWith('postgres://user@'))
    return { kind: 'skip', why: 'needs PostgreSQL (STANDIN_TEST_DATABASE_URL)' };
  if (words[0] === 'serve' && !words.includes('--help')) return { kind: 'serve', env, command: rest };
  if (words[0] === 'apps' && words[1] === 'open' && !words.includes('--help')) return { kind: 'open', env, command: rest };
  return { kind: 'run', command, exit: DOCUMENTED_EXIT.find((d) => command.includes(d.shown))?.exit ?? 0 };
}

/**
 * README.md lists the commands after `node dist/main.js <command>` (`serve`, `trigger <event-type>`,
 * `apps lint|validate-submission|open` …): each is checked with `--help`, which must be its own, not "unknown command".
 */
export function listedCommands(readme: string): string[] {
  const m = /`node dist\/main\.js <command>`[^:]*:([^;]*);/s.exec(readme);
  if (!m) throw new Error('README.md no longer lists the commands after `node dist/main.js <command>`: update test/docs');
  return [...m[1].matchAll(/`([^`]+)`/g)].flatMap(([, listed]) => {
    const [head, ...args] = listed.split(' ').filter((w) => !w.startsWith('<'));
    const alternatives = args.length ? args[0].split('|').map((a) => `${head} ${a}`) : [head];
    return alternatives.map((c) => `node dist/main.js ${c} --help`);
  });
}
