/**
 * The Python that runs inside the bubblewrap sandbox (`python3 -I -c DRIVER MEMORY OUTPUT PROCESSES OUTPUT_FILES`):
 * it reads one JSON request a line on stdin, runs it through the prelude's runner, and answers one JSON line
 * on its own copy of stdout. User code's stdout and stderr go to the logs (capped), C-level writes to
 * /dev/null. After each execution everything the cell started is killed: in the sandbox's PID namespace
 * `kill(-1)` reaches every process but the namespace's init (bwrap) and this one.
 */
export const BWRAP_DRIVER = String.raw`
def __standin_driver(prelude):
    import base64, hashlib, io, json, os, resource, signal, sys, time
    proto = os.fdopen(os.dup(1), 'w', buffering=1, encoding='utf-8')
    requests = os.fdopen(os.dup(0), 'r', encoding='utf-8')
    null = os.open('/dev/null', os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    memory, output, processes, files_bytes = (int(a) for a in sys.argv[1:5])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    # Processes and threads of this sandbox's user namespace (bwrap and this driver included). The kernel
    # enforces it only for a uid other than the host's root: Standin starts bwrap as nobody when it is root.
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    # Taken before user code runs: a cell replacing os.kill must not stop the cleanup.
    me, kill, waitpid, _exit, monotonic, sleep = os.getpid(), os.kill, os.waitpid, os._exit, time.monotonic, time.sleep

    state = {'logs': [], 'size': 0, 'truncated': False, 'why': None}

    class Logs(io.TextIOBase):
        def writable(self):
            return True
        def write(self, s):
            if state['truncated']:
                return len(s)
            b = len(s.encode('utf-8', 'backslashreplace'))
            if state['size'] + b > output:
                state['logs'].append(s.encode('utf-8', 'backslashreplace')[: output - state['size']].decode('utf-8', 'ignore'))
                state['size'] = output
                state['truncated'] = True
                state['why'] = 'output'
                raise KeyboardInterrupt('output limit')
            state['size'] += b
            state['logs'].append(s)
            return len(s)

    main = sys.modules['__main__'].__dict__
    exec(prelude, main)
    run, take_images = main.pop('__standin_run'), main.pop('__standin_take_images')
    sys.stdout = sys.stderr = Logs()

    def on_alarm(signum, frame):
        state['why'] = 'timeout'
        raise KeyboardInterrupt('time limit')
    signal.signal(signal.SIGALRM, on_alarm)

    def end_processes():
        deadline = monotonic() + 5
        while True:
            try:
                kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                while waitpid(-1, os.WNOHANG)[0] > 0:
                    pass
            except ChildProcessError:
                pass
            try:
                kill(-1, 0)
            except ProcessLookupError:
                return  # nothing left (bwrap reaps the orphans it inherited)
            if monotonic() > deadline:
                return
            sleep(0.005)

    known = {}
    def digest(path):
        h = hashlib.sha256()
        with open(path, 'rb') as f:
            for block in iter(lambda: f.read(1 << 20), b''):
                h.update(block)
        return h.hexdigest()
    def walk():
        out = []
        for root, dirs, files in os.walk('/mnt/data', followlinks=False):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(root, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    out.append(path)
        return out

    proto.write(json.dumps({'type': 'ready'}) + '\n')
    for line in requests:
        req = json.loads(line)
        state.update(logs=[], size=0, truncated=False, why=None)
        status = None
        for f in req['files']:
            data = base64.b64decode(f['b64'])
            sum_ = hashlib.sha256(data).hexdigest()
            if known.get(f['path']) == sum_ and os.path.isfile(f['path']):
                continue
            os.makedirs(os.path.dirname(f['path']), exist_ok=True)
            try:
                with open(f['path'], 'wb') as fh:
                    fh.write(data)
            except OSError as e:
                state['logs'].append(f'OSError: the input files do not fit in the sandbox: {e}')
                status = 'memory'
                break
            known[f['path']] = sum_
        for path in walk():
            known.setdefault(path, digest(path))
        if status is None:
            signal.setitimer(signal.ITIMER_REAL, req['timeoutMs'] / 1000)
            try:
                status = run(req['code'])
            except KeyboardInterrupt:
                status = 'interrupted'
            finally:
                if os.getpid() != me:
                    _exit(0)  # a process the cell forked from this one: it must not answer for the driver
                signal.setitimer(signal.ITIMER_REAL, 0)
            end_processes()
        if status == 'interrupted':
            status = 'timeout' if state['why'] == 'timeout' else 'exception'
        files, omitted, seen, size = [], [], set(), 0
        for path in walk():
            seen.add(path)
            sum_ = digest(path)
            if known.get(path) != sum_:
                known[path] = sum_
                n = os.path.getsize(path)
                if size + n > files_bytes:
                    omitted.append({'path': path, 'size': n})
                    continue
                size += n
                with open(path, 'rb') as fh:
                    files.append({'path': path, 'b64': base64.b64encode(fh.read()).decode()})
        for path in [p for p in known if p not in seen]:
            del known[path]
        images = [base64.b64encode(b).decode() for b in take_images()]
        proto.write(json.dumps({'type': 'result', 'status': status, 'logs': ''.join(state['logs']), 'truncated': state['truncated'], 'omitted': omitted, 'files': files, 'images': images}) + '\n')
`;
