import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt, root } from '../process.js';
import { nginxBinary } from './balancer.js';

/**
 * docs/deploy.md as an operator pastes it: every `sh` block of the page, in order, but the packages and the
 * systemd ones, into one `bash` (umask, `cd`, variables and the no-systemd shell functions carry over), on a
 * scratch machine of its own: a Linux namespace (`unshare`) with its own network (the recipe's ports,
 * `standin.internal` and the webhook receiver's 10.0.0.7 on its loopback) and its own `/etc`, `/opt` and
 * `/var` (temporary folders), a scratch PostgreSQL cluster and a Redis in it. The only edits are the ones
 * the page asks of the operator: `V` and `RELEASE`. The first install is the previous commit's release, the
 * upgrade installs this tree's. Between the page's blocks the test types its checks, each in a subshell.
 * When the namespace's first process ends, everything in it ends: nothing outlives the test.
 */
const PAGE = join(root, 'docs/deploy.md');
const initdb = ['15', '16', '17', '14'].map((v) => `/usr/lib/postgresql/${v}/bin/initdb`).find((p) => existsSync(p));

/** Why this machine cannot run the test, or undefined. */
function unable(): string | undefined {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'it needs root on Linux (a namespace of its own)';
  if (!nginxBinary()) return 'nginx is not installed (apt-get install -y nginx libnginx-mod-stream)';
  if (!initdb) return 'PostgreSQL server binaries are not installed (apt-get install -y postgresql)';
  for (const c of ['unshare', 'redis-server', 'runuser', 'setsid', 'ip', 'curl', 'tar', 'git'])
    if (spawnSync('sh', ['-c', `command -v ${c}`]).status !== 0) return `${c} is not installed`;
  if (spawnSync('git', ['rev-parse', '--verify', '--quiet', 'HEAD~1^{commit}'], { cwd: root }).status !== 0)
    return 'the previous commit is not in the history (not a git checkout, or a shallow clone): no release to upgrade from';
  const ns = spawnSync('unshare', ['--mount', '--net', '--pid', '--fork', '--mount-proc', 'true']);
  if (ns.status !== 0) return `unshare cannot make a namespace here: ${ns.stderr.toString().trim()}`;
  return undefined;
}

/** A block of the page: its info words after the language (`packages`, `systemd`, `no-systemd`) and its text. */
export interface Block {
  tags: string[];
  text: string;
}

/** The page's `sh` blocks, in order. */
export function shellBlocks(markdown: string): Block[] {
  const out: Block[] = [];
  let open: { tags: string[]; lines: string[] } | undefined;
  for (const line of markdown.split('\n')) {
    const fence = /^```(\S*)\s*(.*)$/.exec(line);
    if (fence && !open) open = { tags: fence[1] === 'sh' ? fence[2].split(/\s+/).filter(Boolean) : ['not-sh'], lines: [] };
    else if (fence && open) {
      if (!open.tags.includes('not-sh')) out.push({ tags: open.tags, text: open.lines.join('\n') });
      open = undefined;
    } else open?.lines.push(line);
  }
  return out;
}

/** The blocks a machine without systemd runs (the packages are the test machine's own). */
export function pastedBlocks(markdown: string): Block[] {
  return shellBlocks(markdown).filter((b) => !b.tags.includes('packages') && !b.tags.includes('systemd'));
}

/** The operator's edits: each `V=… RELEASE=…` line of the page, in order, set to a release of the test's. */
export function editReleases(blocks: Block[], releases: { version: string; tarball: string }[]): Block[] {
  let n = 0;
  const edited = blocks.map((b) => ({
    ...b,
    text: b.text.replace(/^V=\S+ RELEASE=\S+$/gm, () => {
      const r = releases[n++];
      if (!r) throw new Error('docs/deploy.md has more releases to edit than the test installs');
      return `V=${r.version} RELEASE=${r.tarball}`;
    }),
  }));
  if (n !== releases.length) throw new Error(`docs/deploy.md names ${n} releases to edit (V=… RELEASE=…), the test ${releases.length}`);
  return edited;
}

/** The previous commit's release: its tree from git, built, packed (cached by commit in node_modules/.cache). */
function previousRelease(commit: string): string {
  const cache = join(root, 'node_modules/.cache/standin-release', commit);
  const made = existsSync(cache) ? readdirSync(cache).find((f) => f.endsWith('.tgz')) : undefined;
  if (made) return join(cache, made);
  const src = mkdtempSync(join(tmpdir(), 'standin-previous-'));
  try {
    execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C '${src}'`], { cwd: root });
    execFileSync('ln', ['-s', join(root, 'node_modules'), join(src, 'node_modules')]);
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: src, stdio: 'pipe' });
    mkdirSync(cache, { recursive: true });
    return execFileSync(process.execPath, [join(root, 'scripts/release.mjs'), '--root', src, '--out', cache], { encoding: 'utf8' }).trim();
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
}

/** The namespace's first process: makes the scratch machine, then pastes the session into one bash. */
const MACHINE = String.raw`
set -e
S=$SCRATCH
mount --bind "$S/etc" /etc
mount --bind "$S/opt" /opt
mount --bind "$S/var" /var
mount --bind "$S/run-postgresql" /run/postgresql
ip link set lo up
ip addr add 10.0.0.7/32 dev lo
echo "127.0.0.1 standin.internal" >> /etc/hosts
runuser -u postgres -- "$PGBIN/initdb" -D "$S/pgdata" -U postgres --auth-local=peer --auth-host=scram-sha-256 >"$S/initdb.log" 2>&1
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$S/pgdata" -l "$S/pgdata/postgres.log" -w \
  -o "-c listen_addresses=127.0.0.1 -c port=5432 -c unix_socket_directories=/run/postgresql -c fsync=off" start >/dev/null
redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no --dir "$S" --logfile "$S/redis.log"
node "$S/receiver.mjs" &
cd "$S/home"
set +e
bash -s < "$S/session.sh" > "$S/session.log" 2>&1
echo $? > "$S/session.rc"
`;

/** The team's webhook receiver at 10.0.0.7:9000 (the recipe's standin.yaml): each delivery a line. */
const RECEIVER = `
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    appendFileSync(process.env.SCRATCH + '/webhooks.jsonl', JSON.stringify({ id: req.headers['webhook-id'], body }) + '\\n');
    res.end('ok');
  });
}).listen(9000, '10.0.0.7');
`;

/** The test's checks, sourced in a subshell between the page's blocks. */
const CHECKS = String.raw`
set -e
C=$SCRATCH/check
mkdir -p "$C"
api() {
  path=$1; shift
  curl -sS --fail-with-body --cacert /etc/standin/tls/server.pem -H "Authorization: Bearer $(cat /etc/standin/secrets/app-key)" \
    -H 'Content-Type: application/json' -H 'OpenAI-Beta: assistants=v2' "https://standin.internal:8443$path" "$@"
}
field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[process.argv[1]]))' "$1"; }
record() { api /v1/assistants -d "{\"model\":\"gpt-4o-mini\",\"name\":\"$1\"}" | field id > "$C/$1"; echo "check: made $1 ($(cat "$C/$1"))"; }
has() { [ "$(api "/v1/assistants/$(cat "$C/$1")" | field name)" = "$1" ] && echo "check: $1 is there"; }
lacks() {
  code=$(curl -s -o /dev/null -w '%{http_code}' --cacert /etc/standin/tls/server.pem -H "Authorization: Bearer $(cat /etc/standin/secrets/app-key)" \
    -H 'OpenAI-Beta: assistants=v2' "https://standin.internal:8443/v1/assistants/$(cat "$C/$1")")
  [ "$code" = 404 ] && echo "check: $1 is not there (404)"
}
both() {
  seen=$(for i in 1 2 3 4 5 6; do curl -s -o /dev/null -D - http://127.0.0.1:8080/v1/models | grep -i '^x-standin-upstream' ; done | sort -u | wc -l)
  [ "$seen" = 2 ] && echo "check: both instances answer through nginx"
}
direct() {
  port=$1; path=$2; shift 2
  curl -sS --fail-with-body -H "Authorization: Bearer $(cat /etc/standin/secrets/app-key)" \
    -H 'Content-Type: application/json' -H 'OpenAI-Beta: assistants=v2' "http://127.0.0.1:$port$path" "$@"
}
folder() { readlink -f "/proc/$(ss -Hltnp "sport = :$1" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)/cwd"; }
mixed() {
  echo "check: 8081 runs $(folder 8081), 8082 runs $(folder 8082)"
  for pair in "8081 8082" "8082 8081"; do
    set -- $pair
    a=$(direct "$1" /v1/assistants -d "{\"model\":\"gpt-4o-mini\",\"name\":\"made on $1\"}" | field id)
    [ "$(direct "$2" "/v1/assistants/$a" | field name)" = "made on $1" ]
    run=$(direct "$1" /v1/threads/runs -d "{\"assistant_id\":\"$a\",\"thread\":{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}}")
    r=$(echo "$run" | field id); t=$(echo "$run" | field thread_id)
    for i in $(seq 1 100); do st=$(direct "$2" "/v1/threads/$t/runs/$r" | field status); [ "$st" = completed ] && break; sleep 0.2; done
    [ "$st" = completed ] && echo "check: made on $1, read on $2, its run completed"
  done
}
webhook() {
  id=$(api /v1/responses -d '{"model":"gpt-4o-mini","input":"hello","background":true}' | field id)
  for i in $(seq 1 100); do grep -q "$id" "$SCRATCH/webhooks.jsonl" 2>/dev/null && break; sleep 0.2; done
  sleep 2
  [ "$(grep -c "$id" "$SCRATCH/webhooks.jsonl")" = 1 ] && echo "check: response.completed for $id delivered once"
}
`;

/**
 * docs/operations.md's metrics, as that page shows them, on the recipe's deployment: its curl line (with the
 * admin key from the recipe's secret file) and each target of its Prometheus scrape job.
 */
function operationsChecks(): string {
  const page = readFileSync(join(root, 'docs/operations.md'), 'utf8');
  const line = page.split('\n').find((l) => l.startsWith('curl ') && l.includes('/admin/v1/metrics'));
  const targets = /targets: \[([^\]]*)\]/
    .exec(page)?.[1]
    .split(',')
    .map((t) => t.trim().replace(/^'|'$/g, ''));
  if (!line || !targets?.length) throw new Error('docs/operations.md: no metrics curl line or Prometheus targets');
  return [
    'ADMIN_KEY=$(cat /etc/standin/secrets/admin-key)',
    `[ -n "$(${line})" ] && echo "check: operations.md's metrics line answers"`,
    ...targets.map(
      (t) =>
        `curl -sf -H "Authorization: Bearer $ADMIN_KEY" http://${t}/admin/v1/metrics | grep -q standin_jobs_oldest_due_age_seconds && echo "check: Prometheus target ${t} answers"`,
    ),
  ].join('; ');
}

/** The checks typed before the first block that contains `before` (or after the last block). */
const HOOKS: { before?: string; run: string }[] = [
  {
    // Section 5 started nginx and asked it: the instances are up behind it.
    before: 'curl -s http://127.0.0.1:8080/livez',
    run: 'both; webhook; record before-backup',
  },
  {
    // The backups were taken: each reads, and what is made now is not in them.
    before: 'DUMP=/var/backups/standin/latest.dump',
    run: [
      'runuser -u postgres -- pg_restore --list < /var/backups/standin/latest.dump >/dev/null && echo "check: latest.dump reads"',
      'ls /var/backups/standin/*.jsonl.gz >/dev/null && echo "check: the snapshot is there"',
      'record after-backup',
    ].join('; '),
  },
  {
    // Restored: what was made before the backup is there, what came after it is not; then the upgrade.
    before: 'before-upgrade.dump',
    run: 'has before-backup; lacks after-backup; both; record before-upgrade',
  },
  {
    // Between the two restarts of the upgrade: the new version on 8081, the old one on 8082, one database.
    before: 'standin_stop 2; standin_start 2; standin_ready 2',
    run: 'mixed',
  },
  {
    run: [
      'has before-backup; has before-upgrade; record after-upgrade; has after-upgrade; both; webhook',
      // docs/operations.md describes this version's metrics.
      operationsChecks(),
      'echo "check: /opt/standin is $(readlink /opt/standin)"',
      'pgrep -u standin -x node | while read p; do echo "check: instance $p runs $(readlink -f /proc/$p/cwd) $(tr "\\0" " " < /proc/$p/cmdline)"; done',
    ].join('; '),
  },
];

/** The session as pasted: the page's blocks with the test's checks between them, in subshells. */
export function session(blocks: Block[]): string {
  const check = (run: string) => `( echo; . "$SCRATCH/checks.sh"; ${run} )`;
  const parts: string[] = ['set -e', `trap 'echo "recipe-test: failed: $BASH_COMMAND" >&2' ERR`];
  const pending = [...HOOKS];
  for (const b of blocks) {
    while (pending[0]?.before && b.text.includes(pending[0].before)) parts.push(check(pending.shift()!.run));
    parts.push(b.text);
  }
  const left = pending.filter((h) => h.before);
  if (left.length) throw new Error(`docs/deploy.md has no block with: ${left.map((h) => h.before).join(', ')}`);
  for (const h of pending) parts.push(check(h.run));
  parts.push('echo "recipe-test: the end"');
  return `${parts.join('\n')}\n`;
}

const why = unable();
if (why) console.warn(`test/deploy/pasted skipped: ${why}`);

describe.runIf(!why)('docs/deploy.md pasted into one shell on a scratch machine', () => {
  let scratch: string | undefined;
  let machine: ChildProcess | undefined;
  afterAll(async () => {
    // A test that timed out: unshare's --kill-child ends the namespace's first process, and with it the rest.
    if (machine && machine.exitCode === null) machine.kill('SIGKILL');
    if (scratch && !process.env.STANDIN_KEEP_SCRATCH) await rm(scratch, { recursive: true, force: true });
  }, 300_000);

  it('installs the previous release, serves, backs up, restores and upgrades to this one, as the page promises', async () => {
    ensureBuilt();
    scratch = mkdtempSync(join(tmpdir(), 'standin-pasted-'));
    // The PostgreSQL cluster's user reaches its folders under it.
    chmodSync(scratch, 0o755);
    const S = scratch;
    for (const d of ['opt', 'var/lib', 'var/log', 'var/backups', 'var/cache', 'var/tmp', 'run-postgresql', 'home', 'releases'])
      mkdirSync(join(S, d), { recursive: true });
    chmodSync(join(S, 'var/tmp'), 0o1777);
    execFileSync('ln', ['-s', '/run', join(S, 'var/run')]);
    execFileSync('ln', ['-s', '/run/lock', join(S, 'var/lock')]);
    execFileSync('cp', ['-a', '/etc', join(S, 'etc')]);
    mkdirSync(join(S, 'pgdata'), { mode: 0o700 });
    execFileSync('chown', ['postgres:postgres', join(S, 'run-postgresql'), join(S, 'pgdata')]);

    const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
    const previous = execFileSync('git', ['rev-parse', 'HEAD~1'], { cwd: root, encoding: 'utf8' }).trim();
    const releases = [
      { version: `${version}-${previous.slice(0, 7)}`, tarball: previousRelease(previous) },
      {
        version,
        tarball: execFileSync(process.execPath, [join(root, 'scripts/release.mjs'), '--out', join(S, 'releases')], {
          encoding: 'utf8',
        }).trim(),
      },
    ];
    const blocks = editReleases(pastedBlocks(readFileSync(PAGE, 'utf8')), releases);
    writeFileSync(join(S, 'session.sh'), session(blocks));
    writeFileSync(join(S, 'checks.sh'), CHECKS);
    writeFileSync(join(S, 'receiver.mjs'), RECEIVER);
    writeFileSync(join(S, 'machine.sh'), MACHINE);

    const started = Date.now();
    machine = spawn('unshare', ['--mount', '--net', '--pid', '--fork', '--mount-proc', '--kill-child', 'bash', join(S, 'machine.sh')], {
      env: { PATH: process.env.PATH, SCRATCH: S, PGBIN: join(initdb!, '..'), HOME: join(S, 'home') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    machine.stdout!.on('data', (d: Buffer) => (out += d));
    machine.stderr!.on('data', (d: Buffer) => (out += d));
    const code = await new Promise<number | null>((r) => machine!.once('exit', r));
    const log = existsSync(join(S, 'session.log')) ? readFileSync(join(S, 'session.log'), 'utf8') : '';
    const seconds = Math.round((Date.now() - started) / 1000);
    console.log(
      `test/deploy/pasted: the session took ${seconds} s\n${log
        .split('\n')
        .filter((l) => l.startsWith('check:'))
        .join('\n')}`,
    );
    const rc = existsSync(join(S, 'session.rc')) ? readFileSync(join(S, 'session.rc'), 'utf8').trim() : 'none';
    expect({ code, rc }, `${out}\n--- session.log ---\n${log}`).toEqual({ code: 0, rc: '0' });
    expect(log).toContain('recipe-test: the end');

    // What the page's own lines printed: the versions installed, health through nginx.
    expect(log).toContain(`standin ${version}`);
    expect(log).toMatch(/x-standin-upstream: 127\.0\.0\.1:808[12]/i);
    expect(log).toContain('"status":"ready"');
    expect(log).toContain(`restoring /var/backups/standin/standin-`);
    // The test's checks, in order.
    const checks = log.split('\n').filter((l) => l.startsWith('check:'));
    for (const expected of [
      /both instances answer/,
      /response\.completed .* delivered once/,
      /made before-backup/,
      /operations\.md's metrics line answers/,
      /Prometheus target 127\.0\.0\.1:8081 answers/,
      /Prometheus target 127\.0\.0\.1:8082 answers/,
      /latest\.dump reads/,
      /the snapshot is there/,
      /made after-backup/,
      /before-backup is there/,
      /after-backup is not there/,
      /made before-upgrade/,
      /before-upgrade is there/,
      /after-upgrade is there/,
    ])
      expect(
        checks.some((c) => expected.test(c)),
        `${expected}\n${checks.join('\n')}`,
      ).toBe(true);
    // Mid-upgrade, each version in its own folder, each serving what the other wrote.
    expect(checks).toContain(`check: 8081 runs /opt/standin-${releases[1].version}, 8082 runs /opt/standin-${releases[0].version}`);
    expect(checks).toContain('check: made on 8081, read on 8082, its run completed');
    expect(checks).toContain('check: made on 8082, read on 8081, its run completed');
    // Upgraded: the link names this release's folder, and both instances run from it.
    expect(checks).toContain(`check: /opt/standin is /opt/standin-${version}`);
    const instances = checks.filter((c) => c.startsWith('check: instance '));
    expect(instances).toHaveLength(2);
    // Started after the link moved: their folder (the unit's WorkingDirectory, /opt/standin) is this release's.
    for (const c of instances) expect(c).toContain(`runs /opt/standin-${version} node /opt/standin/dist/main.js serve`);
    // Nothing secret in the instances' logs.
    const logs = ['1', '2'].map((i) => readFileSync(join(S, `var/log/standin/${i}.log`), 'utf8')).join('\n');
    for (const f of ['admin-key', 'app-key', 'webhook-secret', 'database-password'])
      expect(logs).not.toContain(readFileSync(join(S, `etc/standin/secrets/${f}`), 'utf8').trim());
  }, 420_000);
});
