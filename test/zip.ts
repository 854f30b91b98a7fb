import { crc32, deflateRawSync } from 'node:zlib';

/** Zip archives built in the tests: DOCX packages and their bombs (vector stores), wheels (code interpreter). */

/** One entry of a zip archive: its name, its bytes as stored (deflated unless `stored`), inflated size and CRC-32. */
export interface ZipEntry {
  name: string;
  packed: Buffer;
  size: number;
  crc: number;
  stored?: boolean;
}

/** A zip archive of the entries, each deflated (method 8) or stored (method 0). */
export function zipEntries(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const { name, packed, size, crc, stored } of entries) {
    const n = Buffer.from(name);
    const method = stored ? 0 : 8;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    writeShared(local, 8, method, { crc, packed, size, name: n });
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    writeShared(entry, 10, method, { crc, packed, size, name: n });
    entry.writeUInt32LE(offset, 42);
    locals.push(local, n, packed);
    central.push(entry, n);
    offset += 30 + n.length + packed.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/**
 * The fields a local header and its central directory entry share, in the same order from the method on
 * (`at`): method, then (past the time and date) CRC-32, packed size, inflated size and the name's length.
 */
function writeShared(header: Buffer, at: number, method: number, e: { crc: number; packed: Buffer; size: number; name: Buffer }) {
  header.writeUInt16LE(method, at);
  header.writeUInt32LE(e.crc, at + 6);
  header.writeUInt32LE(e.packed.length, at + 10);
  header.writeUInt32LE(e.size, at + 14);
  header.writeUInt16LE(e.name.length, at + 18);
}

/** A zip entry of a text or bytes, deflated unless `stored`. */
export function zipEntry(name: string, content: string | Buffer, stored = false): ZipEntry {
  const data = Buffer.from(content);
  return { name, packed: stored ? data : deflateRawSync(data), size: data.length, crc: crc32(data), stored };
}
