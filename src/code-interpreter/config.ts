import { Type, type Static } from 'typebox';

/** The root `code_interpreter` section of the config file. */
export const CodeInterpreterConfig = Type.Object(
  {
    executor: Type.Optional(
      Type.Union([Type.Literal('auto'), Type.Literal('pyodide'), Type.Literal('bwrap')], {
        description:
          "'auto' (the default: bwrap where bubblewrap and a python3 with numpy, pandas and matplotlib are present, pyodide otherwise), 'pyodide' (embedded) or 'bwrap' (Debian's python3 in a bubblewrap sandbox)",
      }),
    ),
    pool_size: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 32, description: 'warm kernels kept ready for new sessions (default 2)' }),
    ),
    max_sessions: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1024, description: 'sessions (one kernel each) alive at once (default 8)' }),
    ),
    session_idle_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 30 * 86_400,
        description: 'a session unused this long on the Standin clock is closed (default 3600)',
      }),
    ),
    timeout_ms: Type.Optional(
      Type.Integer({ minimum: 100, maximum: 3_600_000, description: 'wall-time limit of one execution (default 30000)' }),
    ),
    memory_mb: Type.Optional(
      Type.Integer({ minimum: 64, maximum: 4096, description: "the interpreter's memory, /mnt/data included (default 512)" }),
    ),
    output_limit_bytes: Type.Optional(
      Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024, description: 'logs kept of one execution (default 65536)' }),
    ),
    max_files: Type.Optional(
      Type.Integer({
        minimum: 16,
        maximum: 1_000_000,
        description: 'files and folders a session may hold in /mnt/data and /tmp (default 10000)',
      }),
    ),
    output_files_limit_bytes: Type.Optional(
      Type.Integer({
        minimum: 1024,
        maximum: 1024 * 1024 * 1024,
        description: 'bytes of changed files one execution returns; the rest are left out with a note (default 67108864)',
      }),
    ),
    max_processes: Type.Optional(
      Type.Integer({
        minimum: 8,
        maximum: 4096,
        description: "bwrap executor: processes and threads in a session's sandbox at once (default 64)",
      }),
    ),
    packages: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "pyodide executor: where the distribution's packages are fetched on first import, a mirror URL or an absolute folder (default Pyodide's CDN for the installed version)",
      }),
    ),
    package_lock: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'pyodide executor: a pyodide-lock.json naming the packages and their SHA-256 (default the one the pyodide package ships)',
      }),
    ),
    warm_on_start: Type.Optional(Type.Boolean({ description: 'start the pool when Standin starts rather than at the first execution' })),
  },
  { additionalProperties: false },
);
export type CodeInterpreterConfig = Static<typeof CodeInterpreterConfig>;

export const DEFAULTS = {
  executor: 'auto' as 'auto' | 'pyodide' | 'bwrap',
  pool_size: 2,
  max_sessions: 8,
  session_idle_seconds: 3600,
  timeout_ms: 30_000,
  memory_mb: 512,
  output_limit_bytes: 65_536,
  max_files: 10_000,
  output_files_limit_bytes: 64 * 1024 * 1024,
  max_processes: 64,
  warm_on_start: false,
} satisfies Omit<Required<CodeInterpreterConfig>, 'packages' | 'package_lock'>;

/** What `GET /admin/v1/code_interpreter` answers. */
export const ExecutorView = Type.Object({
  executor: Type.Union([Type.Literal('pyodide'), Type.Literal('bwrap')]),
  description: Type.String({ description: 'one line, as the start banner shows it' }),
  packages: Type.Array(Type.String(), {
    description: 'bwrap: which of numpy, pandas and matplotlib its python3 has; pyodide: every package of the lock file',
  }),
  package_source: Type.Union([Type.String(), Type.Null()], { description: 'pyodide: where packages come from on first import' }),
});
export type ExecutorView = Static<typeof ExecutorView>;
