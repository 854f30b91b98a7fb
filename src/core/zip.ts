/** One entry of a zip archive's central directory: how its bytes are stored and where they start. */
export interface ZipEntry {
  /** 0 stored, 8 deflated. */
  method: number;
  packedSize: number;
  /** The size the entry says it inflates to (a header may lie). */
  declaredSize: number;
  /** The offset of its local header. */
  local: number;
}

/**
 * A zip archive's central directory (a DOCX package, a Python wheel), read without inflating anything:
 * undefined when there is no end of central directory record; `complete` is false when an entry the record
 * counts is missing or malformed (the entries before it are listed).
 */
export function zipDirectory(buf: Buffer): { count: number; entries: ZipEntry[]; complete: boolean } | undefined {
  // The end of central directory record: 22 bytes plus a comment of at most 64 KiB, at the end.
  let end = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--)
    if (buf.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  if (end < 0) return undefined;
  const count = buf.readUInt16LE(end + 10);
  const entries: ZipEntry[] = [];
  let at = buf.readUInt32LE(end + 16);
  for (let n = 0; n < count; n++) {
    if (at + 46 > buf.length || buf.readUInt32LE(at) !== 0x02014b50) return { count, entries, complete: false };
    entries.push({
      method: buf.readUInt16LE(at + 10),
      packedSize: buf.readUInt32LE(at + 20),
      declaredSize: buf.readUInt32LE(at + 24),
      local: buf.readUInt32LE(at + 42),
    });
    at += 46 + buf.readUInt16LE(at + 28) + buf.readUInt16LE(at + 30) + buf.readUInt16LE(at + 32);
  }
  return { count, entries, complete: true };
}

/** An entry's stored bytes (after its local header, cut at the archive's end); undefined when the header lies outside. */
export function zipEntryData(buf: Buffer, entry: ZipEntry): Buffer | undefined {
  if (entry.local + 30 > buf.length) return undefined;
  const start = entry.local + 30 + buf.readUInt16LE(entry.local + 26) + buf.readUInt16LE(entry.local + 28);
  return buf.subarray(start, Math.min(buf.length, start + entry.packedSize));
}
