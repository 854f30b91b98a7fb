import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { zipEntries, zipEntry } from '../zip.js';

/** Wheels built in the tests, and a mirror serving them on loopback: Pyodide's package path without the internet. */

/** A zip of stored (uncompressed) entries, all a wheel needs; with `deflate`, compressed as real wheels are. */
export function zip(files: Record<string, string | Buffer>, deflate = false): Buffer {
  return zipEntries(Object.entries(files).map(([name, content]) => zipEntry(name, content, !deflate)));
}

export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A wheel: its modules (and libraries) plus METADATA, WHEEL and RECORD. */
export function wheel(name: string, modules: Record<string, string | Buffer>): { fileName: string; bytes: Buffer } {
  const dist = `${name.replace(/-/g, '_')}-1.0`;
  const files: Record<string, string | Buffer> = {
    ...modules,
    [`${dist}.dist-info/METADATA`]: `Metadata-Version: 2.1\nName: ${name}\nVersion: 1.0\n`,
    [`${dist}.dist-info/WHEEL`]: 'Wheel-Version: 1.0\nGenerator: standin-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
  };
  const record = Object.entries(files).map(
    ([path, text]) => `${path},sha256=${createHash('sha256').update(text).digest('base64url')},${Buffer.byteLength(text)}`,
  );
  files[`${dist}.dist-info/RECORD`] = [...record, `${dist}.dist-info/RECORD,,`].join('\n') + '\n';
  return { fileName: `${dist}-py3-none-any.whl`, bytes: zip(files) };
}

/**
 * A WebAssembly side module as Emscripten's dlopen loads it (a `dylink.0` section first), exporting
 * `standin_add(a, b)`: `op` 0x6a is i32.add (0x6b, i32.sub, makes the copy no package provides).
 */
export function sideModule(op = 0x6a): Buffer {
  const leb = (n: number) => {
    const out: number[] = [];
    do {
      const b = n & 0x7f;
      n >>>= 7;
      out.push(n ? b | 0x80 : b);
    } while (n);
    return out;
  };
  const name = (s: string) => [...leb(s.length), ...Buffer.from(s)];
  const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
  const body = [0, 0x20, 0, 0x20, 1, op, 0x0b]; // no locals; local.get 0, local.get 1, op, end
  return Buffer.from([
    ...[0, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
    ...section(0, [...name('dylink.0'), 1, 4, 0, 0, 0, 0]), // memory info: no data, no table
    ...section(1, [1, 0x60, 2, 0x7f, 0x7f, 1, 0x7f]), // (i32, i32) -> i32
    ...section(2, [1, ...name('env'), ...name('memory'), 2, 0, 0]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name('standin_add'), 0, 0]),
    ...section(10, [1, body.length, ...body]),
  ]);
}

// The shape of matplotlib's API the prelude uses (use, get_fignums, figure().savefig, close), with a real
// PNG writer: the prelude's figure capture runs for real on a package loaded on first import.
export const fakeMatplotlib = wheel('matplotlib', {
  'matplotlib/__init__.py': 'backend = None\ndef use(name):\n    global backend\n    backend = name\n',
  'matplotlib/pyplot.py': String.raw`
import struct, zlib
_figures = {}
def show():
    raise RuntimeError('the prelude did not replace show()')
class Figure:
    def __init__(self, number):
        self.number = number
    def savefig(self, buf, format=None):
        assert format == 'png'
        raw = b''.join(b'\x00' + bytes([255, 0, 0]) * 3 for _ in range(2))
        chunk = lambda kind, data: struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
        buf.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 3, 2, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
def figure(number=None):
    number = number or len(_figures) + 1
    return _figures.setdefault(number, Figure(number))
def get_fignums():
    return sorted(_figures)
def close(which):
    _figures.clear()
`,
});

/** One package entry of a pyodide-lock.json, for a wheel built here. */
export function lockEntry(name: string, w: { fileName: string; bytes: Buffer }, imports: string[], depends: string[] = []) {
  return {
    name,
    version: '1.0',
    file_name: w.fileName,
    install_dir: 'site',
    sha256: sha256(w.bytes),
    package_type: 'package',
    imports,
    depends,
  };
}

/** Serves `files` (by file name) under `<url>`, on loopback; `requests` records each file asked for. */
export async function serveMirror(files: Map<string, Buffer>): Promise<{ url: string; server: Server; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const name = decodeURIComponent(req.url!.slice('/dist/'.length));
    requests.push(name);
    const body = files.get(name);
    res.writeHead(body ? 200 : 404).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/dist/`, server, requests };
}
