"""Import each module named on the command line in its own child process, and print what failed.

Run by the layout test. Starting ~130 interpreters, each importing lancedb, pydantic and the
rest again, took about a minute; instead one parent imports the third-party modules named on
stdin and forks a child per project module. The children share nothing of the project's own
code, which is what "imports on its own" is about: no module may rely on another project
module having been imported first. Prints one JSON object: module name -> last line of the
error ("" when it imported).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback


def _import_in_child(name: str) -> str:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: import, report, leave without running the parent's exit handlers
        os.close(read)
        try:
            importlib.import_module(name)
            message = ""
        except BaseException:
            message = (traceback.format_exc().strip().splitlines() or ["failed"])[-1]
        os.write(write, message.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    return message if status == 0 else message or f"the child ended with status {status}"


def main() -> None:
    for name in (line.strip() for line in sys.stdin):
        try:
            if name:
                importlib.import_module(name)
        except BaseException:  # a third-party module that needs something absent; the child will say
            pass
    print(json.dumps({name: _import_in_child(name) for name in sys.argv[1:]}))


if __name__ == "__main__":
    main()
