"""Runs one launcher worker's script as `python script.py` would, and records an uncaught
exception's traceback in TORCHELASTIC_ERROR_FILE for the launcher's failure report."""
import builtins
import json
import os
import runpy
import sys
import time
import traceback
import types


def write_error_file(tb, message):
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path or os.path.exists(path):  # the first error recorded wins (@record may have written it)
        return
    try:
        with open(path, "w") as f:
            json.dump({"message": message, "traceback": tb, "timestamp": time.time()}, f)
    except OSError:
        pass


def _run_script(path):
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = builtins
    sys.modules["__main__"] = main  # pickling and multiprocessing's spawn find the script's classes here
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec")
    exec(code, main.__dict__)


def main():
    args = sys.argv[1:]
    as_module = bool(args) and args[0] == "-m"
    if as_module:
        args = args[1:]
    if not args:
        sys.exit("usage: python -m ember.distributed._launch_worker [-m] script [args...]")
    sys.argv = list(args)
    try:
        if as_module:
            runpy.run_module(args[0], run_name="__main__", alter_sys=True)
        else:
            _run_script(args[0])
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - recorded, printed, and the worker fails
        t = e.__traceback__
        while t is not None and t.tb_frame.f_code.co_filename == __file__:  # this file's frames
            t = t.tb_next
        tb = "".join(traceback.format_exception(type(e), e, t))
        write_error_file(tb, f"{type(e).__name__}: {e}")
        sys.stderr.write(tb)
        sys.stderr.flush()
        os._exit(1)  # skip atexit: a process group would wait for peers that may be gone


if __name__ == "__main__":
    main()
