import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapAvailable } from './bwrap.js';
import { processTree } from './bwrap-watch.js';
import { createCodeInterpreter, type CodeInterpreterRuntime } from './service.js';

/** This test process's descendants: the sandboxes' processes (and bwrap's) among them. */
const descendants = async () => (await processTree(process.pid)).length - 1;

const available = bwrapAvailable();

/**
 * The bwrap executor's process limit (issue 25, item 6): a cell runs at most max_processes processes and
 * threads, may stop its own, and leaves nothing running when it ends; and the limits of what it stores.
 * Skipped where bubblewrap or python3 is missing.
 */
describe.runIf(available)('code interpreter (bwrap): processes and files', { timeout: 120_000 }, () => {
  let ci: CodeInterpreterRuntime;
  let baseline = 0;

  beforeAll(async () => {
    ci = createCodeInterpreter(() => 0, console, {
      executor: 'bwrap',
      pool_size: 0,
      memory_mb: 256,
      max_processes: 64,
      max_files: 200,
      output_files_limit_bytes: 3 * 1024 * 1024,
    });
    baseline = await descendants();
  });
  afterAll(async () => {
    await ci?.close();
  });

  it('refuses 300 sleeps past the limit, in each session on its own, and the cell can stop its children', async () => {
    const code = [
      'import subprocess, time',
      'ps = []',
      'try:',
      '    for _ in range(300):',
      '        ps.append(subprocess.Popen(["sleep", "600"]))',
      'except OSError as e:',
      '    print("refused after", len(ps), type(e).__name__)',
      'time.sleep(1)  # both sessions hold theirs at once',
      'for p in ps:',
      '    p.terminate()',
      'codes = {p.wait() for p in ps}',
      'print("stopped", len(ps), codes)',
    ].join('\n');
    const [a, b] = await Promise.all([ci.execute({ session: 'a', code }), ci.execute({ session: 'b', code })]);
    for (const r of [a, b]) {
      expect(r.status, r.logs).toBe('ok');
      const started = Number(/refused after (\d+) BlockingIOError/.exec(r.logs)?.[1]);
      // 64 tasks per sandbox, bwrap's init and the driver among them; 50 in each proves the count is per sandbox.
      expect(started).toBeGreaterThan(50);
      expect(started).toBeLessThanOrEqual(62);
      expect(r.logs).toContain(`stopped ${started} {-15}`);
    }
    expect(await descendants()).toBe(baseline + 6); // two sandboxes: bwrap, its init and the driver each
  });

  it('counts threads as the limit counts processes', async () => {
    const code = [
      'import threading, time',
      'threading.stack_size(256 * 1024)  # the default 8 MiB stacks would reach RLIMIT_AS first',
      'ts = []',
      'try:',
      '    for _ in range(300):',
      '        t = threading.Thread(target=time.sleep, args=(1,))',
      '        t.start()',
      '        ts.append(t)',
      'except RuntimeError as e:',
      '    print("refused after", len(ts), e)',
      'for t in ts:',
      '    t.join()',
    ].join('\n');
    const r = await ci.execute({ session: 'threads', code });
    expect(r.status, r.logs).toBe('ok');
    const started = Number(/refused after (\d+) can't start new thread/.exec(r.logs)?.[1]);
    expect(started).toBeGreaterThan(50);
    expect(started).toBeLessThanOrEqual(62);
  });

  it('kills what a cell leaves running when it ends, and when it times out', async () => {
    const before = await descendants();
    const left = await ci.execute({
      session: 'left',
      code: 'import subprocess\nfor _ in range(20):\n    subprocess.Popen(["sleep", "600"])',
    });
    expect(left.status, left.logs).toBe('ok');
    expect(await descendants()).toBe(before + 3);
    const slow = 'import subprocess, time\nfor _ in range(20):\n    subprocess.Popen(["sleep", "600"])\ntime.sleep(600)';
    const timeout = await ci.execute({ session: 'left', code: slow, timeoutMs: 1500 });
    expect(timeout.status).toBe('timeout');
    expect(await descendants()).toBe(before + 3);
    expect((await ci.execute({ session: 'left', code: '6 * 7' })).logs).toBe('42\n');
  });

  it('contains a fork bomb: the sandbox never passes its limit and nothing is left after', async () => {
    const before = await descendants();
    let peak = 0;
    const sampler = setInterval(() => void descendants().then((n) => (peak = Math.max(peak, n - before))), 50);
    const bomb = [
      'import os, time',
      'end = time.time() + 4',
      'while time.time() < end:',
      '    try:',
      '        os.fork()',
      '    except OSError:',
      '        pass',
    ].join('\n');
    const r = await ci.execute({ session: 'bomb', code: bomb });
    clearInterval(sampler);
    expect(['ok', 'exception']).toContain(r.status);
    // The outer bwrap plus at most 64 tasks of the sandbox; reached, never passed.
    expect(peak).toBeGreaterThan(40);
    expect(peak).toBeLessThanOrEqual(65);
    expect(await descendants()).toBe(before + 3);
    expect((await ci.execute({ session: 'bomb', code: '1 + 1' })).logs).toBe('2\n');
  });

  it('refuses a user namespace inside (it would mount a tmpfs outside the size bounds)', async () => {
    const code =
      'import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.unshare(0x10000000), os.strerror(ctypes.get_errno()))';
    const r = await ci.execute({ session: 'ns', code });
    expect(r.logs).toMatch(/^-1 /);
  });

  it('ends a session whose processes together pass the memory limit', async () => {
    // Each child stays under the per-process limit (RLIMIT_AS); six of them do not fit in 256 MB together.
    const code = [
      'import os, time',
      'for _ in range(6):',
      '    if os.fork() == 0:',
      '        hold = b"x" * (60 * 1024 * 1024)',
      '        time.sleep(30)',
      '        os._exit(0)',
      'time.sleep(30)',
    ].join('\n');
    const r = await ci.execute({ session: 'mem', code });
    expect(r.status).toBe('memory');
    expect(r.logs).toContain('execution stopped: the memory limit of 256 MB was reached: the session was reset');
  });

  it('ends a session past max_files, and returns at most output_files_limit_bytes of files', async () => {
    const many = await ci.execute({ session: 'files', code: 'import os\nfor i in range(100000):\n    open(f"/tmp/f{i}", "w").close()' });
    expect(many.status).toBe('exception');
    expect(many.logs).toContain('a session holds at most 200 files and folders in /mnt/data and /tmp');
    const out = await ci.execute({
      session: 'files',
      code: 'for i in range(5):\n    open(f"/mnt/data/out{i}.bin", "wb").write(bytes([i]) * (1024 * 1024))',
    });
    expect(out.status, out.logs).toBe('ok');
    expect(out.files.map((f) => f.path).sort()).toEqual(['/mnt/data/out0.bin', '/mnt/data/out1.bin', '/mnt/data/out2.bin']);
    expect(out.logs).toContain('[files not returned: /mnt/data/out3.bin (1048576 bytes), /mnt/data/out4.bin (1048576 bytes);');
  });
});
