/**
 * The Python that runs inside the bubblewrap sandbox (`python3 -I -c DRIVER MEMORY OUTPUT`): it reads one JSON
 * request a line on stdin, runs it through the prelude's runner, and answers one JSON line on its own copy
 * of stdout. User code's stdout and stderr go to the logs (capped), C-level writes to /dev/null.
 */
export const BWRAP_DRIVER = String.raw`
def __standin_driver(prelude):
    import base64, hashlib, io, json, os, resource, signal, sys
    proto = os.fdopen(os.dup(1), 'w', buffering=1, encoding='utf-8')
    requests = os.fdopen(os.dup(0), 'r', encoding='utf-8')
    null = os.open('/dev/null', os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    memory, output = int(sys.argv[1]), int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

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

    known = {}
    def digest(path):
        with open(path, 'rb') as f:
            return hashlib.sha256(f.read()).hexdigest()
    def walk():
        out = []
        for root, dirs, files in os.walk('/mnt/data', followlinks=False):
            for name in files:
                path = os.path.join(root, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    out.append(path)
        return out

    proto.write(json.dumps({'type': 'ready'}) + '\n')
    for line in requests:
        req = json.loads(line)
        state.update(logs=[], size=0, truncated=False, why=None)
        for f in req['files']:
            data = base64.b64decode(f['b64'])
            sum_ = hashlib.sha256(data).hexdigest()
            if known.get(f['path']) == sum_ and os.path.isfile(f['path']):
                continue
            os.makedirs(os.path.dirname(f['path']), exist_ok=True)
            with open(f['path'], 'wb') as fh:
                fh.write(data)
            known[f['path']] = sum_
        for path in walk():
            known.setdefault(path, digest(path))
        signal.setitimer(signal.ITIMER_REAL, req['timeoutMs'] / 1000)
        try:
            status = run(req['code'])
        except KeyboardInterrupt:
            status = 'interrupted'
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if status == 'interrupted':
            status = 'timeout' if state['why'] == 'timeout' else 'exception'
        files, seen = [], set()
        for path in walk():
            seen.add(path)
            sum_ = digest(path)
            if known.get(path) != sum_:
                known[path] = sum_
                with open(path, 'rb') as fh:
                    files.append({'path': path, 'b64': base64.b64encode(fh.read()).decode()})
        for path in [p for p in known if p not in seen]:
            del known[path]
        images = [base64.b64encode(b).decode() for b in take_images()]
        proto.write(json.dumps({'type': 'result', 'status': status, 'logs': ''.join(state['logs']), 'truncated': state['truncated'], 'files': files, 'images': images}) + '\n')
`;
