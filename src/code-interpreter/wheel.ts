import { webcrypto } from 'node:crypto';
import { promisify } from 'node:util';
import { inflateRaw } from 'node:zlib';

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
  // The end of central directory record: 22 bytes plus a comment of at most 64 KiB, at the end.
  let end = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--)
    if (buf.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  if (end < 0) throw new Error('not a zip archive: no end of central directory');
  const count = buf.readUInt16LE(end + 10);
  let at = buf.readUInt32LE(end + 16);
  const out: string[] = [];
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error('not a zip archive: bad central directory entry');
    const method = buf.readUInt16LE(at + 10);
    const compressed = buf.readUInt32LE(at + 20);
    const size = buf.readUInt32LE(at + 24);
    const nameLength = buf.readUInt16LE(at + 28);
    const local = buf.readUInt32LE(at + 42);
    at += 46 + nameLength + buf.readUInt16LE(at + 30) + buf.readUInt16LE(at + 32);
    if (size < 8 || (method !== 0 && method !== 8)) continue; // a wasm binary is at least its 8-byte header
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(start, start + compressed);
    const data = method === 0 ? raw : await inflate(raw, { maxOutputLength: size });
    if (data.length >= 4 && data.readUInt32LE(0) === WASM_MAGIC) out.push(await sha256(data));
  }
  known.set(key, out);
  return out;
}
