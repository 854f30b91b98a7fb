import { webcrypto } from 'node:crypto';
import { promisify } from 'node:util';
import { inflateRaw } from 'node:zlib';
import { zipDirectory, zipEntryData } from '../core/zip.js';

const inflate = promisify(inflateRaw);
const sha256 = async (bytes: Uint8Array) => Buffer.from(await webcrypto.subtle.digest('SHA-256', bytes)).toString('hex');

const WASM_MAGIC = 0x6d736100; // '\0asm', little-endian
const known = new Map<string, string[]>();

/**
 * The SHA-256 of every WebAssembly binary inside a zip (a wheel, or a shared-library package of the lock
 * file): the only WebAssembly code a Pyodide kernel may compile once user code can run (kernel-worker.ts).
 * Entries are recognised by the wasm magic number, not by name. Only ever given verified bytes; remembered
 * per archive (by its own hash), so kernels loading the same package do not inflate it again. Inflating and
 * hashing run off the event loop (zlib's and WebCrypto's thread pool): a large wheel does not stall Standin.
 */
export async function wasmHashes(zip: Uint8Array): Promise<string[]> {
  const key = await sha256(zip);
  const hit = known.get(key);
  if (hit) return hit;
  const buf = Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength);
  const directory = zipDirectory(buf);
  if (!directory) throw new Error('not a zip archive: no end of central directory');
  if (!directory.complete) throw new Error('not a zip archive: bad central directory entry');
  const out: string[] = [];
  for (const entry of directory.entries) {
    // a wasm binary is at least its 8-byte header
    if (entry.declaredSize < 8 || (entry.method !== 0 && entry.method !== 8)) continue;
    const raw = zipEntryData(buf, entry);
    if (!raw) throw new Error('not a zip archive: an entry outside the archive');
    const data = entry.method === 0 ? raw : await inflate(raw, { maxOutputLength: entry.declaredSize });
    if (data.length >= 4 && data.readUInt32LE(0) === WASM_MAGIC) out.push(await sha256(data));
  }
  known.set(key, out);
  return out;
}
