import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';

/**
 * Process settings: every option is a `--flag` and a `STANDIN_*` environment variable (flags win).
 * Areas add their options to `OPTIONS`; the type follows from the table.
 */
type Kind = 'string' | 'int' | 'bool' | 'port';
interface OptionSpec<K extends Kind = Kind, D = unknown> {
  kind: K;
  default: D;
  help: string;
  /** A secret: also read from a file (`STANDIN_<NAME>_FILE`, `--<name>-file`), so it need not sit in the environment. */
  secret?: boolean;
}

const opt = <K extends Kind, D extends (K extends 'int' | 'port' ? number : K extends 'bool' ? boolean : string | undefined)>(
  kind: K,
  def: D,
  help: string,
  secret?: 'secret',
): OptionSpec<K, D> => ({
  kind,
  default: def,
  help,
  ...(secret ? { secret: true } : {}),
});

/** A listener that is switched off (`--mtls-port off`); 0 asks for a free port, as `--port 0` does. */
export const OFF = -1;

export const OPTIONS = {
  host: opt('string', '127.0.0.1', 'address to listen on'),
  port: opt('int', 8080, 'HTTP port (0 picks a free one)'),
  data: opt('string', './.standin', 'data folder of the embedded SQLite store'),
  databaseUrl: opt('string', undefined, 'postgres://… keeps all state in PostgreSQL', 'secret'),
  dbPoolSize: opt('int', 10, 'PostgreSQL connections per instance for transactions (bench/pg-sizes.mjs)'),
  dbPipelines: opt('int', 1, 'PostgreSQL connections per instance for statements outside transactions, pipelined'),
  redisUrl: opt('string', undefined, 'redis://… shares rate-limit counters between instances', 'secret'),
  rateLimitOutage: opt('string', 'closed', "while Redis is unreachable: 'closed' answers 503 (retry), 'open' admits requests uncounted"),
  config: opt('string', undefined, 'declarative config file (YAML or JSON)'),
  seed: opt('bool', true, 'create the demo organization, keys and ad account on first start (--no-seed)'),
  vendor: opt('string', 'vendor', "the host's name: window.<vendor>, <vendor>/outputTemplate, urn:<vendor>:params:…"),
  adminKey: opt('string', undefined, 'admin key of /admin/v1 (generated and printed when unset, on loopback only)', 'secret'),
  logLevel: opt(
    'string',
    undefined,
    'fatal, error, warn, info, debug or silent (default: info for serve, one line per request; warn elsewhere)',
  ),
  logRequests: opt(
    'bool',
    true,
    'one JSON log line per request at info level: method, route, status, ms, project, request id (docs/operations.md)',
  ),
  logFormat: opt('string', 'json', "log lines as 'json' (one JSON object a line, for a collector) or 'pretty' (readable, for a terminal)"),
  metrics: opt('bool', true, 'serve Prometheus metrics at /admin/v1/metrics and count requests for them (docs/operations.md)'),
  bodyLimit: opt('int', 1_048_576, 'largest request body in bytes'),
  fileUploadLimit: opt('int', 536_870_912, 'largest file POST /v1/files accepts, in bytes (multipart, streamed; --body-limit is for JSON)'),
  bodyIdleTimeoutMs: opt(
    'int',
    30_000,
    'a request body (an upload, JSON) that sends no byte for this many ms is cut off: connection closed, partial upload removed',
  ),
  bodyTimeoutMs: opt(
    'int',
    3_600_000,
    'a request body (an upload, JSON) must arrive whole within this many ms, or the connection is closed',
  ),
  snapshotMaxBytes: opt('int', 4 * 1024 ** 3, 'largest snapshot file an import reads, in bytes as sent (gzip’d; docs/snapshots.md)'),
  snapshotMaxExpandedBytes: opt(
    'int',
    32 * 1024 ** 3,
    'largest a snapshot may grow to decompressed, in bytes; past it the import is refused',
  ),
  snapshotTimeoutMs: opt(
    'int',
    1_800_000,
    'wall time (ms) an import may spend checking and writing rows; past it the import is refused, nothing changed',
  ),
  snapshotUploadMinRate: opt(
    'int',
    1024,
    'bytes per second a snapshot upload must average over every 5 s, or the connection is closed (0: no floor)',
  ),
  recentFilesMb: opt(
    'int',
    64,
    'on PostgreSQL, the files last uploaded to this instance also kept in its memory (MB), so that attaching them reads nothing back (0: none)',
  ),
  ingestProcesses: opt('int', 2, 'processes that extract, chunk and embed attached files (kept warm; docs/files.md)'),
  ingestMemoryMb: opt('int', 512, 'resident memory (MB) of one ingestion process; past it the file fails invalid_file'),
  ingestTimeoutMs: opt('int', 120_000, "wall time (ms) of one file's extraction, chunking and embedding; past it the file fails"),
  ingestMaxInflatedMb: opt('int', 256, "what a DOCX's parts or a PDF's streams may inflate to in all (MB)"),
  ingestMaxDepth: opt('int', 256, 'deepest nesting of HTML elements or JSON arrays and objects in an attached file'),
  searchMemoryMb: opt(
    'int',
    1024,
    "what this instance's search indexes hold between searches (MB); the least recently searched stores leave first",
  ),
  searchApproximateFrom: opt(
    'int',
    50_000,
    'search a store approximately from this many chunks on: int8 vectors through a coarse quantizer, the best chunks by words without scoring every one, both rescored exactly (0: never; docs/files.md)',
  ),
  searchIndexDir: opt(
    'string',
    undefined,
    "folder of saved search indexes, so a large store's first search on an instance reads its index instead of every chunk ('off': none; default: search-indexes in --data for SQLite, else ~/.cache/standin/search-indexes; docs/files.md)",
  ),
  searchIndexSaveFrom: opt('int', 10_000, "live chunks from which a store's search index is saved to --search-index-dir (0: never)"),
  ingestMaxPages: opt('int', 10_000, 'most pages of an attached PDF, parts of an attached DOCX'),
  workers: opt('bool', true, 'run background workers (webhook deliveries, runs) in this process'),
  leaseMs: opt(
    'int',
    10_000,
    "how long (ms) an instance's claim on work (a run, a background response, a batch, an ingestion, a webhook delivery) lasts unless renewed; renewed every third of it, so work of an instance that died is taken over this long after its last renewal (docs/deploy.md)",
  ),
  jobMaxDeaths: opt('int', 3, 'a job whose process died while it ran this many times in a row is failed, not run again'),
  mtlsPort: opt('port', OFF, "port of the mutual TLS token endpoint: 'off' (the default), a number, or 0 for a free one"),
  mtlsApiPort: opt('port', OFF, "port of the mutual TLS API listener: 'off' (the default), a number, or 0 for a free one"),
  tlsCert: opt('string', undefined, 'PEM server certificate for the mTLS listeners (generated for local use when unset)'),
  tlsKey: opt('string', undefined, 'PEM private key for --tls-cert'),
  widgetPort: opt(
    'int',
    0,
    'port of the separate origin that serves app components (0: a free port; behind a balancer, a fixed one it routes)',
  ),
  publicUrl: opt(
    'string',
    undefined,
    "the address users reach Standin at (a balancer's): the banner, sign-in and download links; https makes cookies Secure (default http://host:port)",
  ),
  widgetPublicUrl: opt('string', undefined, 'the address users reach the widget listener at, behind a load balancer (defaults to it)'),
  appsCsp: opt(
    'string',
    'strict',
    "CSP of app components: 'strict' (the MCP Apps default) or 'lenient' (the reference host's: 'unsafe-eval', blob:/data: scripts, blob: workers)",
  ),
  submissionSchemaUrl: opt('string', undefined, 'the $schema constant of app submission files (default: derived from --vendor)'),
  shutdownDrainMs: opt(
    'int',
    5000,
    'on SIGTERM, /readyz fails at once and in-flight requests get up to this many ms before the listener closes',
  ),
  webhookTimeoutMs: opt('int', 5000, 'a webhook receiver must answer 2xx within this many ms'),
  requestLogSize: opt('int', 2000, 'requests the control plane keeps, newest first, with their headers and small bodies (the dashboard)'),
  checkResponses: opt('bool', false, "hold every JSON reply against its route's response schema (a mismatch is a 500; for tests)"),
  retention: opt(
    'string',
    undefined,
    "how long records are kept, e.g. 'webhook_deliveries=7d,run_events=off' (docs/retention.md; the config file's section wins)",
  ),
  trustProxy: opt(
    'string',
    undefined,
    'comma-separated addresses or CIDRs of load balancers whose X-Forwarded-For names the client (IP allowlists, the request log); default: none',
  ),
  fixturesRoot: opt(
    'string',
    undefined,
    'the folder every record/replay `fixtures` folder of the models config must be inside (default: the working directory; docs/models.md)',
  ),
  fixtureMaxBytes: opt(
    'int',
    16_777_216,
    'largest replay fixture file in bytes; a larger one is refused before it is read (docs/models.md)',
  ),
  outboundAllow: opt(
    'string',
    undefined,
    'comma-separated CIDRs or host names outbound calls (webhooks, JWKS, the app host) may reach despite the SSRF guard',
  ),
} as const;

type ValueOf<S> = S extends { kind: 'int' | 'port' }
  ? number
  : S extends { kind: 'bool' }
    ? boolean
    : S extends { default: string }
      ? string
      : string | undefined;
export type Settings = { -readonly [K in keyof typeof OPTIONS]: ValueOf<(typeof OPTIONS)[K]> };

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const envName = (s: string) => `STANDIN_${s.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;

function parseValue(name: string, kind: Kind, raw: string): string | number | boolean {
  if (kind === 'int') {
    if (!/^\d+$/.test(raw)) throw new Error(`--${kebab(name)} must be a whole number, got '${raw}'`);
    return Number(raw);
  }
  if (kind === 'port') {
    if (/^off$/i.test(raw)) return OFF;
    if (!/^\d+$/.test(raw) || Number(raw) > 65535)
      throw new Error(`--${kebab(name)} must be 'off' or a port from 0 (a free one) to 65535, got '${raw}'`);
    return Number(raw);
  }
  if (kind === 'bool') {
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    throw new Error(`--${kebab(name)} must be true or false, got '${raw}'`);
  }
  return raw;
}

/**
 * A secret's value from its file (`STANDIN_ADMIN_KEY_FILE`, `--admin-key-file`): the whole file, less the
 * line break editors and `echo` leave at its end. `where` names the variable or flag in errors.
 */
function readSecretFile(where: string, path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`${where}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const value = text.replace(/[\r\n]+$/, '');
  if (!value) throw new Error(`${where}: ${path} is empty`);
  if (value.length > 64 * 1024) throw new Error(`${where}: ${path} is over 64 KiB; it should hold the secret alone`);
  return value;
}

/** Reads settings from defaults, then the environment, then `argv` flags. Returns the rest of argv too. */
export function readSettings(argv: string[], env: NodeJS.ProcessEnv = process.env): { settings: Settings; rest: string[] } {
  const settings = {} as Record<string, unknown>;
  const byFlag = new Map<string, string>();
  const byFileFlag = new Map<string, string>();
  for (const [name, spec] of Object.entries(OPTIONS)) {
    settings[name] = spec.default;
    byFlag.set(kebab(name), name);
    const fromEnv = env[envName(name)];
    if (fromEnv !== undefined && fromEnv !== '') settings[name] = parseValue(name, spec.kind, fromEnv);
    if (!('secret' in spec)) continue;
    byFileFlag.set(`${kebab(name)}-file`, name);
    const file = env[`${envName(name)}_FILE`];
    if (file === undefined || file === '') continue;
    if (fromEnv !== undefined && fromEnv !== '') throw new Error(`set ${envName(name)} or ${envName(name)}_FILE, not both`);
    settings[name] = readSecretFile(`${envName(name)}_FILE`, file);
  }
  const rest: string[] = [];
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      rest.push(arg);
      continue;
    }
    const [flag, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    let value = inline;
    const fromFile = byFileFlag.get(flag);
    if (fromFile) {
      const path = value ?? argv[++i];
      if (path === undefined) throw new Error(`--${flag} needs a value`);
      if (given.has(fromFile)) throw new Error(`give --${kebab(fromFile)} or --${flag}, not both`);
      given.add(fromFile);
      settings[fromFile] = readSecretFile(`--${flag}`, path);
      continue;
    }
    let name = byFlag.get(flag);
    if (name && 'secret' in OPTIONS[name as keyof typeof OPTIONS]) {
      if (given.has(name)) throw new Error(`give --${flag} or --${flag}-file, not both`);
      given.add(name);
    }
    if (!name && flag.startsWith('no-') && byFlag.has(flag.slice(3))) {
      name = byFlag.get(flag.slice(3))!;
      if (OPTIONS[name as keyof typeof OPTIONS].kind !== 'bool') throw new Error(`unknown option --${flag}`);
      settings[name] = false;
      continue;
    }
    if (!name) {
      rest.push(arg);
      continue;
    }
    const spec = OPTIONS[name as keyof typeof OPTIONS];
    if (value === undefined) {
      if (
        spec.kind === 'bool' &&
        (argv[i + 1] === undefined || argv[i + 1].startsWith('--') || !/^(1|0|true|false|yes|no|on|off)$/i.test(argv[i + 1]))
      )
        value = 'true';
      else value = argv[++i];
    }
    if (value === undefined) throw new Error(`--${flag} needs a value`);
    settings[name] = parseValue(name, spec.kind, value);
  }
  return { settings: settings as Settings, rest };
}

/** The help text of every option. */
export function optionsHelp(): string {
  return Object.entries(OPTIONS)
    .map(([name, spec]) => {
      const line = `  --${kebab(name).padEnd(16)} ${envName(name).padEnd(26)} ${spec.help}`;
      if (!('secret' in spec)) return line;
      return `${line}\n  --${`${kebab(name)}-file`.padEnd(16)} ${`${envName(name)}_FILE`.padEnd(26)} the same, read from a file (a secret)`;
    })
    .join('\n');
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** An address as `net` reads it: brackets dropped, with its family (0: not an IP address, a host name). */
const parsed = (host: string) => {
  const address = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return { address, family: isIP(address) };
};

/**
 * Whether `--host` is loopback: `localhost`, or an address `net` reads as one, however spelled
 * (`0:0:0:0:0:0:0:1`, `::ffff:127.0.0.1`). A host name is not (`127.example.com` may resolve anywhere).
 */
export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  const { address, family } = parsed(host);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const UNSPECIFIED = new BlockList();
UNSPECIFIED.addAddress('0.0.0.0', 'ipv4');
UNSPECIFIED.addAddress('::', 'ipv6');

/** Whether `--host` is every interface (`0.0.0.0`, `::`, however spelled). */
export function isUnspecified(host: string): boolean {
  const { address, family } = parsed(host);
  return family !== 0 && UNSPECIFIED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
