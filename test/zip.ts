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
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(n.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(method, 10);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(packed.length, 20);
    entry.writeUInt32LE(size, 24);
    entry.writeUInt16LE(n.length, 28);
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

/** A zip entry of a text or bytes, deflated unless `stored`. */
export function zipEntry(name: string, content: string | Buffer, stored = false): ZipEntry {
  const data = Buffer.from(content);
  return { name, packed: stored ? data : deflateRawSync(data), size: data.length, crc: crc32(data), stored };
}
