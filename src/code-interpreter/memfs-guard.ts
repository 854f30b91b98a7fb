/** The parts of Emscripten's FS and MEMFS (inside Pyodide) the guard patches. */
export interface MemfsNode {
  mode: number;
  contents?: ArrayBufferView | Record<string, MemfsNode>;
  usedBytes?: number;
}
type Fn = (...args: never[]) => unknown;
export interface EmscriptenFs {
  isFile(mode: number): boolean;
  close(stream: unknown): void;
  createStream(stream: object, fd?: number): unknown;
  streams: ({ node?: MemfsNode } | null)[];
  ErrnoError: new (errno: number) => Error;
  filesystems: {
    MEMFS: {
      ops_table: { file: { node: Record<string, Fn>; stream: Record<string, Fn> }; dir: { node: Record<string, Fn> } };
      stream_ops: Record<string, Fn>;
      expandFileStorage(node: MemfsNode, capacity: number): void;
      getFileDataAsTypedArray(node: MemfsNode): Uint8Array;
      node_ops: Record<string, Fn>;
    };
  };
}

/** What the kernel reads back from the guard after each execution. */
export interface MemfsGuard {
  /** Bytes held by the files the session wrote (capacity of their buffers) and by its pipes. */
  bytes(): number;
  /** What was refused since the last `reset()`: a write for memory, or a create for the file count. */
  refused(): 'memory' | 'files' | undefined;
  reset(): void;
  /** While on, creates are not the session's files (a package being installed): its bytes still count. */
  installing(on: boolean): void;
}

/**
 * Makes the in-memory filesystem count against the kernel's memory limit and bounds its entries.
 *
 * MEMFS keeps each file in a JS Uint8Array: outside WebAssembly memory and outside V8's heap limit, so
 * without this a cell could fill the host's memory through /mnt/data. Every write, truncate, create and
 * remove of MEMFS, and every write to a pipe, goes through here: a write that would take `wasmBytes() + files` past `limitBytes` fails
 * with ENOSPC, a create past `maxNodes` with EDQUOT, and Python sees an OSError. Like kernelMain it is
 * handed to the worker as text: nothing from outside its own body.
 */
export function guardMemfs(FS: EmscriptenFs, limitBytes: number, maxNodes: number, wasmBytes: () => number): MemfsGuard {
  const ENOSPC = 51;
  const EDQUOT = 19;
  const ENAMETOOLONG = 37;
  const MEMFS = FS.filesystems.MEMFS;
  const table = MEMFS.ops_table;
  const sizes = new WeakMap<object, number>(); // what each file (or pipe) is counted for
  const created = new WeakSet<MemfsNode>();
  const detached = new Set<MemfsNode>(); // removed but still open: its bytes are still held
  let bytes = 0;
  let nodes = 0;
  let refused: 'memory' | 'files' | undefined;
  let installing = false;

  // A file's buffer is a Uint8Array, or an Int8Array when it was sliced from the WebAssembly heap.
  const capacity = (node: MemfsNode) => (ArrayBuffer.isView(node.contents) ? node.contents.byteLength : 0);
  const account = (key: object, now: number) => {
    bytes += now - (sizes.get(key) ?? 0);
    sizes.set(key, now);
  };
  const need = (key: object, grownTo: number) => {
    if (wasmBytes() + bytes - (sizes.get(key) ?? 0) + grownTo > limitBytes) {
      refused = 'memory';
      throw new FS.ErrnoError(ENOSPC);
    }
  };
  // What MEMFS.expandFileStorage will allocate for a write ending at `end` (it grows by doubling, then 1/8).
  const expanded = (node: MemfsNode, end: number) => {
    const prev = capacity(node);
    if (prev >= end) return prev;
    const grown = Math.max(end, (prev * (prev < 1024 * 1024 ? 2 : 1.125)) >>> 0);
    return prev ? Math.max(grown, 256) : grown;
  };
  const forget = (node: MemfsNode | undefined) => {
    if (!node) return;
    if (created.has(node)) {
      created.delete(node);
      nodes--;
    }
    if (FS.streams.some((s) => s?.node === node)) detached.add(node);
    else {
      bytes -= sizes.get(node) ?? 0;
      sizes.delete(node);
    }
  };
  const checkName = (name: string) => {
    if (name.length > 255) throw new FS.ErrnoError(ENAMETOOLONG);
  };
  const born = <T>(node: T): T => {
    if (installing) return node;
    created.add(node as MemfsNode);
    nodes++;
    return node;
  };
  const room = () => {
    if (installing || nodes < maxNodes) return;
    refused ??= 'files';
    throw new FS.ErrnoError(EDQUOT);
  };

  const write = MEMFS.stream_ops.write as unknown as (
    stream: { node: MemfsNode },
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
    canOwn?: boolean,
  ) => number;
  const guardedWrite = function (
    this: unknown,
    stream: { node: MemfsNode },
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
    canOwn?: boolean,
  ) {
    const node = stream.node;
    if (length) {
      const fresh = canOwn || (node.usedBytes === 0 && position === 0);
      need(node, fresh ? length : expanded(node, position + length));
    }
    const n = write.call(this, stream, buffer, offset, length, position, canOwn);
    account(node, capacity(node));
    return n;
  };
  const setattr = MEMFS.node_ops.setattr as unknown as (node: MemfsNode, attr: { size?: number }) => void;
  const guardedSetattr = function (this: unknown, node: MemfsNode, attr: { size?: number }) {
    if (attr.size !== undefined && attr.size !== node.usedBytes) need(node, attr.size);
    setattr.call(this, node, attr);
    account(node, capacity(node));
  };
  // A growing file is copied into a new buffer 1/8 larger each time, and the old ones wait for V8's
  // collector: the process then holds several times the file. Past 1 MiB a file grows in place instead, in
  // a resizable buffer (it reserves address space up to the limit, and only what is used costs memory).
  MEMFS.expandFileStorage = (node: MemfsNode, end: number) => {
    const capacity = expanded(node, end);
    if (capacity === (ArrayBuffer.isView(node.contents) ? node.contents.byteLength : 0)) return;
    const old = node.contents as Uint8Array;
    const buffer = old.buffer as ArrayBuffer & { resizable?: boolean; maxByteLength?: number; resize?(n: number): void };
    if (buffer.resizable && old.byteOffset === 0 && capacity <= buffer.maxByteLength!) {
      buffer.resize!(capacity);
      node.contents = new Uint8Array(buffer, 0, capacity);
      return;
    }
    const data = MEMFS.getFileDataAsTypedArray(node);
    const fresh =
      capacity < 1024 * 1024
        ? new ArrayBuffer(capacity)
        : new (ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer)(capacity, {
            maxByteLength: Math.max(capacity, limitBytes),
          });
    node.contents = new Uint8Array(fresh);
    (node.contents as Uint8Array).set(data);
  };
  MEMFS.stream_ops.write = guardedWrite as unknown as Fn; // msync writes through this one
  table.file.stream.write = guardedWrite as unknown as Fn;
  MEMFS.node_ops.setattr = guardedSetattr as unknown as Fn;
  table.file.node.setattr = guardedSetattr as unknown as Fn;

  const dir = table.dir.node;
  const mknod = dir.mknod as unknown as (parent: MemfsNode, name: string, mode: number, dev: number) => MemfsNode;
  dir.mknod = function (this: unknown, parent: MemfsNode, name: string, mode: number, dev: number) {
    checkName(name);
    room();
    return born(mknod.call(this, parent, name, mode, dev));
  } as unknown as Fn;
  const symlink = dir.symlink as unknown as (parent: MemfsNode, name: string, target: string) => MemfsNode;
  dir.symlink = function (this: unknown, parent: MemfsNode, name: string, target: string) {
    checkName(name);
    if (target.length > 4096) throw new FS.ErrnoError(ENAMETOOLONG);
    room();
    return born(symlink.call(this, parent, name, target));
  } as unknown as Fn;
  const entry = (parent: MemfsNode, name: string) =>
    parent.contents && !ArrayBuffer.isView(parent.contents) ? parent.contents[name] : undefined;
  for (const op of ['unlink', 'rmdir'] as const) {
    const original = dir[op] as unknown as (parent: MemfsNode, name: string) => void;
    dir[op] = function (this: unknown, parent: MemfsNode, name: string) {
      const node = entry(parent, name);
      original.call(this, parent, name);
      forget(node);
    } as unknown as Fn;
  }
  const rename = dir.rename as unknown as (node: MemfsNode, dir: MemfsNode, name: string) => void;
  dir.rename = function (this: unknown, node: MemfsNode, to: MemfsNode, name: string) {
    checkName(name);
    const replaced = entry(to, name);
    rename.call(this, node, to, name);
    if (replaced !== node) forget(replaced);
  } as unknown as Fn;
  // Emscripten's pipes buffer without bound (a real one blocks at 64 KiB): their buffers count too. PIPEFS
  // is not exported; its stream operations are found on the first pipe's stream.
  interface Pipe {
    buckets: unknown[];
  }
  type PipeStream = { node?: { pipe?: Pipe }; stream_ops?: Record<string, Fn> & { guarded?: boolean } };
  const BUCKET = 8192;
  const held = (pipe: Pipe) => pipe.buckets.length * BUCKET;
  const guardPipes = (ops: Record<string, Fn> & { guarded?: boolean }) => {
    ops.guarded = true;
    const pipeWrite = ops.write as unknown as (stream: PipeStream, buffer: Uint8Array, offset: number, length: number) => number;
    ops.write = function (this: unknown, stream: PipeStream, buffer: Uint8Array, offset: number, length: number) {
      const pipe = stream.node!.pipe!;
      need(pipe, held(pipe) + Math.ceil(length / BUCKET + 1) * BUCKET);
      const n = pipeWrite.call(this, stream, buffer, offset, length);
      account(pipe, held(pipe));
      return n;
    } as unknown as Fn;
    for (const op of ['read', 'close'] as const) {
      const original = ops[op] as unknown as (stream: PipeStream, ...rest: unknown[]) => unknown;
      ops[op] = function (this: unknown, stream: PipeStream, ...rest: unknown[]) {
        try {
          return original.call(this, stream, ...rest);
        } finally {
          const pipe = stream.node?.pipe;
          if (pipe) account(pipe, held(pipe));
        }
      } as unknown as Fn;
    }
  };
  const createStream = FS.createStream.bind(FS);
  FS.createStream = (stream: PipeStream, fd?: number) => {
    if (stream.node?.pipe && stream.stream_ops && !stream.stream_ops.guarded) guardPipes(stream.stream_ops);
    return createStream(stream, fd);
  };

  const close = FS.close.bind(FS);
  FS.close = (stream: unknown) => {
    try {
      close(stream);
    } finally {
      for (const node of detached)
        if (!FS.streams.some((s) => s?.node === node)) {
          detached.delete(node);
          bytes -= sizes.get(node) ?? 0;
          sizes.delete(node);
        }
    }
  };

  return {
    bytes: () => bytes,
    refused: () => refused,
    reset: () => (refused = undefined),
    installing: (on) => (installing = on),
  };
}
