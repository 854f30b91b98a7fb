import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { isAbsolute } from 'node:path';
import { insideRoot } from '../core/paths.js';

/** One package of Pyodide's distribution, as `pyodide-lock.json` lists it. */
export interface LockPackage {
  name: string;
  file_name: string;
  sha256: string;
  depends: string[];
  imports: string[];
  install_dir: string;
  package_type?: string;
}

/** A verified wheel handed to a kernel to install. */
export interface PackageFile {
  name: string;
  fileName: string;
  installDir: string;
  bytes: Uint8Array;
}

const pyodideRequire = createRequire(import.meta.url);

/** The installed pyodide npm package's version (its packages are published for exactly this version). */
export function pyodideVersion(): string {
  return (pyodideRequire('pyodide/package.json') as { version: string }).version;
}

/** Where Pyodide publishes the packages of the installed version. */
export function defaultPackageSource(): string {
  return `https://cdn.jsdelivr.net/pyodide/v${pyodideVersion()}/full/`;
}

/** The lock file the pyodide npm package ships. */
export function defaultLockFile(): string {
  return pyodideRequire.resolve('pyodide/pyodide-lock.json');
}

/** Refuses a `packages` value that is neither an http(s) or file URL nor an absolute folder. */
export function checkPackageSource(source: string): void {
  if (!isAbsolute(source) && !/^(https?|file):\/\//.test(source))
    throw new Error(`packages must be an http(s) or file URL or an absolute folder, got '${source}'`);
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
/** Python's package names compare case-insensitively with `-`, `_` and `.` alike (PEP 503). */
const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/** A wheel's or archive's file name as Pyodide's lock file gives it (`numpy-2.2.5-cp313-…whl`): no folder, no `..`. */
const FILE_NAME = /^(?!\.\.?$)[A-Za-z0-9_.+-]{1,255}$/;

/** How long one file may take to arrive from a mirror, at most (the execution's own limit may be shorter). */
const FETCH_MS = 120_000;

/**
 * The packages of Pyodide's distribution, loaded on first import: resolved through the lock file (only what
 * it names, with its dependencies), read from the cache folder or the source (a mirror URL or a local
 * folder), each file checked against the lock file's SHA-256 before it is cached or handed to a kernel.
 */
export class PackageStore {
  private readonly byName = new Map<string, LockPackage>();
  private readonly byImport = new Map<string, LockPackage>();
  private readonly inflight = new Map<string, Promise<Uint8Array>>();
  readonly source: string;
  private readonly cacheDir?: string;

  constructor(opts: {
    /** A URL (http, https or file) or an absolute folder holding the wheels. */
    source?: string;
    /** A pyodide-lock.json; the pyodide package's by default. */
    lockFile?: string;
    /** Verified wheels are kept here; nothing is cached on disk without it. */
    cacheDir?: string;
    /** Top-level modules user code may not import: packages providing them are never loaded. */
    blocked: readonly string[];
  }) {
    this.source = opts.source ?? defaultPackageSource();
    checkPackageSource(this.source);
    this.cacheDir = opts.cacheDir;
    const lock = JSON.parse(readFileSync(opts.lockFile ?? defaultLockFile(), 'utf8')) as { packages: Record<string, LockPackage> };
    const blocked = new Set(opts.blocked);
    for (const pkg of Object.values(lock.packages)) {
      // A file name is joined to the cache folder, a local source folder or the mirror's URL: a name only.
      if (typeof pkg.file_name !== 'string' || !FILE_NAME.test(pkg.file_name))
        throw new Error(
          `package '${String(pkg.name)}' of the lock file has file_name '${String(pkg.file_name).slice(0, 200)}', which is not a plain file name`,
        );
      // Its first characters name the cache file.
      if (typeof pkg.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(pkg.sha256))
        throw new Error(`package '${String(pkg.name)}' of the lock file has a sha256 that is not 64 hex digits`);
      if (pkg.imports.some((i) => blocked.has(i)) || blocked.has(pkg.name)) continue;
      this.byName.set(normalize(pkg.name), pkg);
      for (const i of pkg.imports) this.byImport.set(i, pkg);
    }
  }

  /** Top-level module names some package of the distribution provides (what a kernel asks about). */
  importable(): string[] {
    return [...this.byImport.keys()];
  }

  /** Package names in the lock file, sorted (for /healthz and the banner). */
  names(): string[] {
    return [...new Set([...this.byName.values()].map((p) => p.name))].sort();
  }

  /** The packages the imports need, dependencies first, leaving out those already `loaded` (by name). */
  resolve(imports: readonly string[], loaded: ReadonlySet<string>): LockPackage[] {
    const out: LockPackage[] = [];
    const seen = new Set<string>();
    const visit = (pkg: LockPackage) => {
      if (seen.has(pkg.name) || loaded.has(pkg.name)) return;
      seen.add(pkg.name);
      for (const dep of pkg.depends) {
        const d = this.byName.get(normalize(dep));
        if (!d) throw new Error(`package '${pkg.name}' depends on '${dep}', which the lock file does not list`);
        visit(d);
      }
      out.push(pkg);
    };
    for (const name of imports) {
      const pkg = this.byImport.get(name);
      if (pkg) visit(pkg);
    }
    return out;
  }

  /**
   * The verified bytes of `pkg`: from the cache, else from the source (then cached). Throws a clear error.
   * Wheels are megabytes (pandas about 12): read and written on libuv's threads, not by synchronous calls on
   * the server's (bench/file-slices.mjs). The hash stays on the server's thread: WebCrypto's digest would
   * copy the bytes there first, which took as long here as readFileSync.
   */
  async fetch(pkg: LockPackage, signal?: AbortSignal): Promise<Uint8Array> {
    const cached = await this.fromCache(pkg);
    if (cached) return cached;
    // Kernels starting together share one download.
    let p = this.inflight.get(pkg.file_name);
    if (!p) {
      p = this.download(pkg, signal).finally(() => this.inflight.delete(pkg.file_name));
      this.inflight.set(pkg.file_name, p);
    }
    return p;
  }

  private cachePath(pkg: LockPackage): string | undefined {
    // The hash in the name: a lock file of another version never picks up this one's file.
    return this.cacheDir && insideRoot(this.cacheDir, `${pkg.sha256.slice(0, 16)}-${pkg.file_name}`);
  }

  private async fromCache(pkg: LockPackage): Promise<Uint8Array | undefined> {
    const path = this.cachePath(pkg);
    if (!path) return undefined;
    let bytes: Uint8Array;
    try {
      bytes = await readFile(path);
    } catch {
      return undefined;
    }
    // Checked again on every read: a cache file changed on disk is fetched anew, never installed.
    return sha256(bytes) === pkg.sha256 ? bytes : undefined;
  }

  private async download(pkg: LockPackage, signal?: AbortSignal): Promise<Uint8Array> {
    const where = this.locate(pkg.file_name);
    let bytes: Uint8Array;
    try {
      if (where.startsWith('/')) bytes = await readFile(where);
      else {
        const timeout = AbortSignal.timeout(FETCH_MS);
        const res = await fetch(where, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout, redirect: 'follow' });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        bytes = new Uint8Array(await res.arrayBuffer());
      }
    } catch (err) {
      const e = err as Error & { cause?: Error };
      throw new Error(`could not fetch package '${pkg.name}' from ${where}: ${e.cause?.message ?? e.message}`);
    }
    const got = sha256(bytes);
    if (got !== pkg.sha256)
      throw new Error(`package '${pkg.name}' from ${where} was refused: its SHA-256 is ${got}, the lock file says ${pkg.sha256}`);
    const path = this.cachePath(pkg);
    if (path) {
      try {
        await mkdir(this.cacheDir!, { recursive: true });
        // Written aside then renamed: a reader never sees half a file.
        const tmp = `${path}.${process.pid}.${randomUUID()}.tmp`;
        await writeFile(tmp, bytes);
        await rename(tmp, path);
      } catch {
        // A cache that cannot be written costs a download next time, nothing else.
      }
    }
    return bytes;
  }

  /** The file's URL or absolute path under the source. */
  private locate(fileName: string): string {
    if (isAbsolute(this.source)) return insideRoot(this.source, fileName);
    const base = this.source.endsWith('/') ? this.source : `${this.source}/`;
    const url = new URL(fileName, base);
    return url.protocol === 'file:' ? url.pathname : url.href;
  }
}
