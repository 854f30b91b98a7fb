import { readdir, readFile, statfs } from 'node:fs/promises';

/** What a bubblewrap sandbox holds, read from the host. */
export interface SandboxUsage {
  /** Processes in the sandbox (its init, bwrap, included). */
  processes: number;
  /** The processes' proportional set size plus the bytes stored in /mnt/data and /tmp. */
  memoryBytes: number;
  /** Files and folders in /mnt/data and /tmp (their roots not counted). */
  files: number;
}

/** A process's children: each of its threads lists those it started (a thread may fork too). */
async function children(pid: number): Promise<number[]> {
  try {
    const tasks = await readdir(`/proc/${pid}/task`);
    const lists = await Promise.all(tasks.map((t) => readFile(`/proc/${pid}/task/${t}/children`, 'utf8').catch(() => '')));
    return lists.flatMap((l) => l.split(' ').filter(Boolean).map(Number));
  } catch {
    return []; // it has just ended
  }
}

/** `root` and every process descending from it (host PIDs). */
export async function processTree(root: number): Promise<number[]> {
  const pids: number[] = [];
  for (let next = [root]; next.length;) {
    pids.push(...next);
    next = (await Promise.all(next.map(children))).flat();
  }
  return pids;
}

async function pss(pid: number): Promise<number> {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Reads the sandbox whose init has host PID `init`: its process tree (through /proc's children lists) and
 * its tmpfs mounts (through /proc/PID/root). Only processes in the sandbox descend from its init.
 */
export async function sandboxUsage(init: number): Promise<SandboxUsage> {
  const pids: number[] = [];
  for (let next = [init]; next.length;) {
    pids.push(...next);
    next = (await Promise.all(next.map(children))).flat();
  }
  let memoryBytes = (await Promise.all(pids.map(pss))).reduce((a, b) => a + b, 0);
  let files = 0;
  for (const dir of ['mnt/data', 'tmp']) {
    const s = await statfs(`/proc/${init}/root/${dir}`);
    memoryBytes += (s.blocks - s.bfree) * s.bsize;
    files += s.files - s.ffree - 1;
  }
  return { processes: pids.length, memoryBytes, files };
}
