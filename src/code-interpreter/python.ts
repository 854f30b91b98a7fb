/**
 * The Python a kernel runs once, before any user code (pyodide, and the bwrap executor's runner too).
 *
 * It defines `__standin_run(code) -> status` and `__standin_take_images() -> list[bytes]` in `__main__`
 * (the kernel takes them and deletes the names), clears the environment, makes /mnt/data the working
 * folder, refuses the modules that reach outside the interpreter, and runs code as a notebook cell does:
 * the value of a last expression is printed. These Python-level refusals give clear errors; the real
 * boundary is the worker's lock-down (kernel-worker.ts), which holds even if Python gets around them.
 */
/** The `os` functions that start or signal processes (refused where there are none to manage). */
const OS_PROCESS_FUNCTIONS = [
  'system',
  'popen',
  'fork',
  'forkpty',
  'execv',
  'execve',
  'execl',
  'execle',
  'execlp',
  'execlpe',
  'execvp',
  'execvpe',
  'spawnl',
  'spawnle',
  'spawnlp',
  'spawnlpe',
  'spawnv',
  'spawnve',
  'spawnvp',
  'spawnvpe',
  'posix_spawn',
  'posix_spawnp',
  'kill',
  'killpg',
];

/**
 * The prelude refusing `blocked` modules (top-level names) and, with `refuseOs`, the process functions of
 * `os` (Pyodide has no processes: clear errors; in bwrap a cell may start and stop its own).
 */
export function prelude(blocked: readonly string[], refuseOs: boolean): string {
  return String.raw`
def __standin_setup():
    import ast, builtins, errno, io, linecache, os, sys, traceback

    os.makedirs('/mnt/data', exist_ok=True)
    os.chdir('/mnt/data')

    # Unbuffered, so stdout and stderr interleave in the logs as they were written.
    sys.stdout = io.TextIOWrapper(io.FileIO(1, 'w', closefd=False), encoding='utf-8', errors='backslashreplace', write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, 'w', closefd=False), encoding='utf-8', errors='backslashreplace', write_through=True)

    blocked = set(${JSON.stringify(blocked)})

    class SandboxImports:
        def find_spec(self, name, path=None, target=None):
            if name.partition('.')[0] in blocked:
                raise ImportError(f"module '{name}' is not available in the sandbox", name=name)
            return None

    def refuse(what):
        def refused(*args, **kwargs):
            raise OSError(f'{what} is not available in the sandbox')
        return refused

    process_functions = ${JSON.stringify(refuseOs ? OS_PROCESS_FUNCTIONS : [])}
    import posix
    for module in (os, posix):
        for name in process_functions:
            if hasattr(module, name):
                setattr(module, name, refuse(f'os.{name}'))

    images = []

    def capture_figures():
        plt = sys.modules.get('matplotlib.pyplot')
        if plt is None:
            return
        for number in plt.get_fignums():
            buf = io.BytesIO()
            plt.figure(number).savefig(buf, format='png')
            images.append(buf.getvalue())
        plt.close('all')

    def show(*args, **kwargs):
        capture_figures()

    class FigureHook:
        # matplotlib imported later (Pyodide loads it on first import): the same set-up, done as it loads.
        names = ('matplotlib', 'matplotlib.pyplot')

        def find_spec(self, name, path=None, target=None):
            if name not in self.names:
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, 'find_spec'):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None and spec.loader is not None:
                    spec.loader = FigureLoader(spec.loader)
                    return spec
            return None

    class FigureLoader:
        def __init__(self, loader):
            self.loader = loader

        def __getattr__(self, name):
            return getattr(self.loader, name)

        def create_module(self, spec):
            return self.loader.create_module(spec)

        def exec_module(self, module):
            # Agg (no display, no JS canvas), and a config folder of its own: user code has no environment.
            os.environ.update(MPLBACKEND='Agg', MPLCONFIGDIR='/tmp/.matplotlib')
            try:
                self.loader.exec_module(module)
            finally:
                os.environ.pop('MPLBACKEND', None)
                os.environ.pop('MPLCONFIGDIR', None)
            if module.__name__ == 'matplotlib':
                module.use('Agg')
            else:
                module.show = show

    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        plt.show = show
    except Exception:
        sys.meta_path.insert(0, FigureHook())

    # After matplotlib's import (it reads MPLCONFIGDIR and HOME once): no environment for user code.
    os.environ.clear()

    main = sys.modules['__main__'].__dict__
    filename = '<stdin>'

    def run(code):
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        try:
            try:
                tree = ast.parse(code, filename, 'exec')
            except SyntaxError as e:
                sys.stderr.write(''.join(traceback.format_exception_only(type(e), e)))
                return 'exception'
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, filename, 'exec'), main)
            if last is not None:
                value = eval(compile(last, filename, 'eval'), main)
                if value is not None:
                    main['_'] = value
                    print(repr(value))
            capture_figures()
            return 'ok'
        except SystemExit as e:
            if e.code in (None, 0):
                return 'ok'
            traceback.print_exception(type(e), e, e.__traceback__.tb_next)
            return 'exception'
        except KeyboardInterrupt as e:
            traceback.print_exception(type(e), e, e.__traceback__.tb_next)
            return 'interrupted'
        except MemoryError as e:
            traceback.print_exception(type(e), e, e.__traceback__.tb_next)
            return 'memory'
        except OSError as e:
            # No space left: the sandbox's files are full, and they are part of its memory.
            traceback.print_exception(type(e), e, e.__traceback__.tb_next)
            return 'memory' if e.errno == errno.ENOSPC else 'exception'
        except BaseException as e:
            traceback.print_exception(type(e), e, e.__traceback__.tb_next)
            return 'exception'
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except Exception:
                pass

    def take_images():
        out = list(images)
        images.clear()
        return out

    for name in list(sys.modules):
        if name.partition('.')[0] in blocked:
            del sys.modules[name]
    sys.meta_path.insert(0, SandboxImports())
    main['__standin_run'] = run
    main['__standin_take_images'] = take_images

__standin_setup()
del __standin_setup
`;
}

/**
 * Pyodide's JS bridge and the package loader: refused in the embedded executor (and never loaded). `ctypes` is
 * allowed: numpy, pandas and matplotlib import it, and in Pyodide it reaches only the interpreter's own
 * WebAssembly memory and functions, which Python code reaches anyway (docs/code-interpreter.md, "ctypes").
 */
export const BLOCKED = ['js', 'pyodide_js', 'pyodide', '_pyodide', '_pyodide_core', 'micropip', 'pyodide_http'];

/** The embedded executor's prelude. */
export const PRELUDE = prelude(BLOCKED, true);
