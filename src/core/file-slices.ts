import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Bytes one read or write of a large file moves at most. A read is one system call, which kernels built
 * without preemption (as these machines' are) run to its end on their core, faulting in each page of new
 * memory it fills: 16 MiB at a time took 50–80 ms here, and the server's thread, woken meanwhile on that
 * core, waited as long (bench/file-slices.mjs). A MiB at a time keeps each call to a few milliseconds,
 * and the whole read takes no longer.
 */
export const FILE_SLICE = 1 << 20;

/**
 * A whole file's bytes, FILE_SLICE at a time (readFileSync reads a file in one call). What it holds when
 * read: fewer bytes than it had when opened if it shrank meanwhile, never more.
 */
export function readFileInSlices(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const bytes = Buffer.allocUnsafe(fstatSync(fd).size);
    let at = 0;
    for (let n = 1; at < bytes.length && n > 0; at += n) n = readSync(fd, bytes, at, Math.min(FILE_SLICE, bytes.length - at), at);
    return bytes.subarray(0, at);
  } finally {
    closeSync(fd);
  }
}
