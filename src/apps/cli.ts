import { readFile } from 'node:fs/promises';
import type { CliEnv } from '../core/module.js';
import type { Settings } from '../core/settings.js';
import { formatFindings, hasErrors, sortFindings, type Finding } from './lint/findings.js';
import { lintServer } from './lint/server.js';
import { connectServer, describeServer, listAllTools, parseServerSpec } from './mcp.js';
import { submissionSchemaUrl } from './submission/schema.js';
import { validateSubmissionText } from './submission/validate.js';

const USAGE = `standin apps — lint and render app components

  standin apps lint <server> [--json] [--dev] [--transport http|sse|stdio] [--sample tool=<json>]... [--no-auto-samples]
      <server> is a URL (Streamable HTTP, falling back to SSE; sse+http://… forces SSE) or a command run over
      stdio ("node server.js"). Read-only tools that need no arguments are called once with {} so their
      structuredContent can be checked against outputSchema; --sample adds calls. --dev reports the
      submission-only rules (ui.domain, public CSP origins) as warnings.
  standin apps validate-submission <file.json> [--json] [--server <server>]
      Checks the submission import file; with --server, also compares its tools with the server's descriptors.
  standin apps open <server>
      Runs Standin and prints the /apps link of the host connected to <server>.

Exit status: 0 no errors (warnings allowed), 1 errors found, 2 bad usage or the server could not be reached.`;

const SUBCOMMANDS = ['lint', 'validate-submission', 'open'];

interface Parsed {
  positional: string[];
  flags: Map<string, string[]>;
}

const VALUE_FLAGS = new Set(['transport', 'sample', 'server', 'locale']);

function parseArgs(args: string[]): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      positional.push(args.slice(i + 1).join(' '));
      break;
    }
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const [name, inline] = a.slice(2).split(/=(.*)/s, 2);
    const value = inline ?? (VALUE_FLAGS.has(name) ? args[++i] : 'true');
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    flags.set(name, [...(flags.get(name) ?? []), value]);
  }
  return { positional, flags };
}

class UsageError extends Error {}

/** Output sink, replaceable in tests. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}
const stdio: CliIo = { out: (t) => process.stdout.write(t + '\n'), err: (t) => process.stderr.write(t + '\n') };

/** Runs `standin apps <command> …`; returns the exit status. */
export async function runAppsCli(args: string[], env: CliEnv, io: CliIo = stdio): Promise<number> {
  const { settings } = env;
  const [command, ...rest] = args;
  try {
    if (SUBCOMMANDS.includes(command) && rest.some((a) => a === '--help' || a === '-h')) {
      io.out(USAGE);
      return 0;
    }
    const p = parseArgs(rest);
    switch (command) {
      case 'lint':
        return await lint(p, settings, io);
      case 'validate-submission':
        return await validate(p, settings, io);
      case 'open':
        return await open(p, env, io);
      case undefined:
      case 'help':
      case '--help':
        io.out(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command 'apps ${command}'`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    io.err(`error: ${(err as Error).message}`);
    return 2;
  }
}

function serverArg(p: Parsed, what: string): string {
  const s = p.positional.join(' ').trim();
  if (!s) throw new UsageError(`${what} needs a <server>: a URL such as http://localhost:3000/mcp, or a command such as "node server.js"`);
  return s;
}

function parseSamples(values: string[]): { tool: string; arguments: Record<string, unknown> }[] {
  return values.map((v) => {
    const eq = v.indexOf('=');
    const tool = eq < 0 ? v : v.slice(0, eq);
    let args: unknown = {};
    if (eq >= 0) {
      try {
        args = JSON.parse(v.slice(eq + 1));
      } catch (err) {
        throw new UsageError(`--sample ${tool}=…: the arguments are not JSON (${(err as Error).message})`);
      }
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      throw new UsageError(`--sample ${tool}=…: the arguments must be a JSON object`);
    return { tool, arguments: args as Record<string, unknown> };
  });
}

async function lint(p: Parsed, settings: Settings, io: CliIo): Promise<number> {
  const spec = parseServerSpec(serverArg(p, 'apps lint'), transportFlag(p.flags.get('transport')?.[0]));
  const json = p.flags.has('json');
  const locale = p.flags.get('locale')?.[0] ?? 'en-US';
  const client = await connectServer(spec, { vendor: settings.vendor, locale, stderr: json ? 'ignore' : 'inherit' });
  try {
    const r = await lintServer(client, {
      vendor: settings.vendor,
      submission: !p.flags.has('dev'),
      samples: parseSamples(p.flags.get('sample') ?? []),
      autoSamples: !p.flags.has('no-auto-samples'),
      callMeta: { [`${settings.vendor}/locale`]: locale },
    });
    const findings = sortFindings(r.findings);
    if (json)
      io.out(
        JSON.stringify(
          {
            server: describeServer(spec),
            tools: r.tools.map((t) => t.name),
            samples: (r.input.samples ?? []).map((s) => ({ tool: s.tool, arguments: s.arguments, error: s.error })),
            findings,
          },
          null,
          2,
        ),
      );
    else {
      io.out(
        `${describeServer(spec)}: ${r.tools.length} tool(s)${r.input.samples?.length ? `, ${r.input.samples.length} sample call(s)` : ''}`,
      );
      io.out(
        withToolNames(
          formatFindings(findings),
          r.tools.map((t) => t.name),
          (r.input.samples ?? []).map((x) => x.tool),
        ),
      );
    }
    return hasErrors(findings) ? 1 : 0;
  } finally {
    await client.close().catch(() => undefined);
  }
}

const TRANSPORTS = ['auto', 'http', 'sse', 'stdio'] as const;

/** `--transport`: one of auto, http, sse, stdio (default auto). */
function transportFlag(value: string | undefined): (typeof TRANSPORTS)[number] {
  if (value === undefined) return 'auto';
  const t = TRANSPORTS.find((x) => x === value);
  if (!t) throw new UsageError(`--transport must be one of ${TRANSPORTS.join(', ')}, got '${value}'`);
  return t;
}

/** Adds the tool name after `$.tools[i]` and `$.samples[i]` so a person sees which tool a line is about. */
function withToolNames(text: string, names: string[], samples: string[]): string {
  return text
    .replace(/\$\.tools\[(\d+)\]/g, (m, i) => (names[Number(i)] !== undefined ? `${m}(${names[Number(i)]})` : m))
    .replace(/\$\.samples\[(\d+)\]/g, (m, i) => (samples[Number(i)] !== undefined ? `${m}(${samples[Number(i)]})` : m));
}

async function validate(p: Parsed, settings: Settings, io: CliIo): Promise<number> {
  const file = p.positional[0];
  if (!file) throw new UsageError('apps validate-submission needs the path of the import file');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    io.err(`error: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    return 2;
  }
  let descriptors;
  const server = p.flags.get('server')?.[0];
  if (server) {
    const client = await connectServer(parseServerSpec(server), { vendor: settings.vendor, stderr: 'ignore' });
    try {
      descriptors = await listAllTools(client);
    } finally {
      await client.close().catch(() => undefined);
    }
  }
  const schemaUrl = submissionSchemaUrl(settings);
  const findings: Finding[] = sortFindings(validateSubmissionText(text, { schemaUrl, descriptors }));
  if (p.flags.has('json')) io.out(JSON.stringify({ file, schema: schemaUrl, findings }, null, 2));
  else io.out(`${file}:\n${formatFindings(findings)}`);
  return hasErrors(findings) ? 1 : 0;
}

/** Starts Standin with the host allowed to run `server` (when it is a command); returns the /apps link. */
export async function startAppsHost(server: string, env: CliEnv): Promise<{ link: string; close(): Promise<void> }> {
  const spec = parseServerSpec(server);
  const standin = await env.boot({ ...env.settings, seed: false });
  if (spec.kind === 'stdio') standin.ctx.services.apps.allowCommand(server.trim());
  const url = await standin.listen();
  return { link: `${url}/apps?server=${encodeURIComponent(server.trim())}`, close: () => standin.close() };
}

async function open(p: Parsed, env: CliEnv, io: CliIo): Promise<number> {
  const host = await startAppsHost(serverArg(p, 'apps open'), env);
  io.out(`App host: ${host.link}\nOpen it in a browser; press Ctrl+C to stop.`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await host.close();
  return 0;
}
