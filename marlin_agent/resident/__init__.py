"""A resident process that keeps the heavy imports loaded, so library commands start in a fraction
of a second.

Most of a short command's time is Python importing LanceDB, Arrow, ONNX Runtime, FFmpeg and the
package itself (about 2 s here); the work is a few hundred milliseconds. The first library command
in a shell runs as usual and, as it exits, starts a resident process in the background that imports
all of that once. Later commands (``launch``) hand it their arguments, environment, folder and
standard streams over a Unix socket; it forks a child that runs the command exactly as the command
would have run itself, on the caller's own terminal or pipes, and passes back the exit status.
Ctrl-C and termination are forwarded to the child.

Nothing is served stale: a child opens the library, settings and models afresh, as a new process
does; the resident holds imports only. A resident belongs to one user, one Python, one installed
version of the code and its packages, and one environment (a fingerprint of each names its
socket), and leaves after ``MARLIN_RESIDENT_IDLE`` seconds without work (default 300); at most three
residents per user are kept (the least recently used leaves), each leaving when it and its waiting
child hold more than ``MARLIN_RESIDENT_MAX_MB``. The resident says it is awake before a caller sends
its streams and takes the command within seconds, or the caller runs it itself; a command tells its
caller its exit status itself, so a resident that is stopped holds no one up.
``MARLIN_RESIDENT=off`` turns it off; it is never used on platforms without ``fork`` and
descriptor passing. These two are environment variables, not settings, because they are read
before any of the package loads.
"""


def exit_now(code: object) -> None:
    """End the process after a command, without the interpreter's teardown.

    Tearing down a process that loaded LanceDB, Arrow and ONNX Runtime takes most of a second
    (module and native-runtime finalisers), longer than a warm command itself. What a normal exit
    does that matters is done here: threads that are not daemons are waited for, ``atexit``
    handlers run (logging flushes its files), standard streams are flushed. ``code`` is what
    ``SystemExit`` carried."""
    import atexit
    import os
    import sys
    import threading

    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message") prints the message and fails, as Python does
        print(code, file=sys.stderr)
        status = 1
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()  # the same call the interpreter makes at exit
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status & 0xFF)
