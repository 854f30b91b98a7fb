import { spawn, type ChildProcess } from 'node:child_process';

/** What one pasted command printed, its exit status and, for curl, the HTTP status. */
export interface Ran {
  command: string;
  out: string;
  err: string;
  rc: number;
  /** The HTTP status of the last curl of the command (curl is wrapped to report it on stderr). */
  status?: number;
}

const STATUS = /\n?@@http (\d+)@@\n?/g;

/**
 * One bash session, as a user's terminal: commands are pasted one at a time and keep the variables the
 * earlier ones set (`export ADS_KEY=…`, `B=…`). curl is wrapped so each answer's HTTP status is known.
 */
export class Shell {
  private readonly child: ChildProcess;
  private out = '';
  private err = '';
  private count = 0;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.child = spawn('bash', ['--norc', '--noprofile'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (d: Buffer) => (this.out += d.toString('utf8')));
    this.child.stderr!.on('data', (d: Buffer) => (this.err += d.toString('utf8')));
    // stdout and stderr apart, as in a terminal (where curl shows no progress meter on stdout either).
    this.child.stdin!.write(`curl() { command curl -w '%{stderr}\\n@@http %{http_code}@@\\n' "$@"; }\n`);
  }

  /** Runs one command as pasted; resolves once it ended (a command still running after `timeoutMs` fails). */
  async run(command: string, timeoutMs = 60_000): Promise<Ran> {
    const marker = `@@done-${++this.count}@@`;
    const from = { out: this.out.length, err: this.err.length };
    this.child.stdin!.write(`${command}\nprintf '\\n${marker}%d\\n' $?; printf '\\n${marker}\\n' >&2\n`);
    const deadline = Date.now() + timeoutMs;
    const done = new RegExp(`\\n${marker}(\\d+)\\n`);
    for (;;) {
      const m = done.exec(this.out.slice(from.out));
      const e = this.err.indexOf(`\n${marker}\n`, from.err);
      if (m && e >= 0) {
        const err = this.err.slice(from.err, e);
        const statuses = [...err.matchAll(STATUS)].map((s) => Number(s[1]));
        const out = this.out.slice(from.out, from.out + m.index).trim();
        return { command, out, err: err.replace(STATUS, '').trim(), rc: Number(m[1]), status: statuses.at(-1) };
      }
      if (Date.now() > deadline)
        throw new Error(`still running after ${timeoutMs} ms: ${command}\n${this.out.slice(from.out)}\n${this.err.slice(from.err)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    this.child.stdin!.end();
    this.child.kill();
  }
}

/** The JSON a command printed. */
export function json(ran: Ran): any {
  try {
    return JSON.parse(ran.out);
  } catch {
    throw new Error(`not JSON from ${ran.command}:\n${ran.out}`);
  }
}
