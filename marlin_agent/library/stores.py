"""Which store keeps the library: LanceDB (the default), memory, or one an installed package adds.

``[library] store`` names it. A package adds a store with an entry point in the group
``marlin_agent.stores`` naming a callable that takes the library's address (``[library] db``) and
returns a store (``protocol.Store``; ``tests/test_store_protocol.py`` is the suite a store passes).
The built-in stores are registered here under the same shape; a package cannot replace one.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

from marlin_agent.errors import ConfigError
from marlin_agent.library.protocol import Store
from marlin_agent.plugins import added

ENTRY_POINT_GROUP = "marlin_agent.stores"
DEFAULT = "lance"

_memories: dict[str, Store] = {}
_memories_lock = threading.Lock()


def _lance(uri: str) -> Store:
    from marlin_agent.library.lance import LanceStore

    return LanceStore(uri)


def _memory(uri: str) -> Store:
    """One store per address per process: what is written lives as long as the process (tests, one-off runs)."""
    from marlin_agent.library.memory import MemoryStore

    with _memories_lock:
        if uri not in _memories:
            _memories[uri] = MemoryStore(f"memory://{uri}")
        return _memories[uri]


BUILT_IN: dict[str, Callable[[str], Store]] = {"lance": _lance, "memory": _memory}


@functools.cache
def store_kinds() -> dict[str, Callable[[str], Store]]:
    """Every store by name: the built-in ones, then those installed packages add."""
    return BUILT_IN | added(ENTRY_POINT_GROUP, "store", taken=set(BUILT_IN))


def open_store(name: str, uri: str) -> Store:
    """The store ``name`` over the library at ``uri``."""
    if name in BUILT_IN:  # the usual case reads no package metadata (a scan of every installed package)
        return BUILT_IN[name](uri)
    kinds = store_kinds()
    if name not in kinds:
        raise ConfigError(f"unknown store {name!r} ([library] store)",
                          hint=f"Use one of: {', '.join(kinds)} (a package can add one: docs/scale.md).")
    return kinds[name](uri)
