"""Loading LanceDB: its whole Python API, or its compiled core alone.

``import lancedb`` costs about half a second on a 2-core machine, most of it Python the index never
runs (a REST catalogue client of ~150 generated models, remote connections, embedding registries);
the compiled core it wraps loads in a few milliseconds. A command that only reads the index (search,
ask over indexed footage) reads through the core (``library.lance_reads``); anything else imports
the whole API.

Both loaders take one lock: the core is loaded by file, without its package, and two threads
loading the same extension at once would initialise it twice (which PyO3 refuses). Every import of
lancedb in the product goes through ``import_lancedb`` for that reason (``app.warm.import_module``).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import threading
import types

_CORE = "lancedb._lancedb"
_REST_CLIENT = "lance_namespace_urllib3_client"
_loading = threading.RLock()


def import_lancedb() -> types.ModuleType:
    """lancedb, without the REST catalogue client it loads eagerly and a local index never uses.

    That generated client's package imports every API class at once. Its package is registered
    here as a bare namespace, so its ``models`` (which lancedb does use) load on their own and the
    API classes only when asked for. Should a lancedb release need more of it at import time, the
    plain import is used. Raises ImportError when the library extra is not installed."""
    with _loading:
        if (loaded := sys.modules.get("lancedb")) is not None:
            return loaded
        spec = importlib.util.find_spec(_REST_CLIENT)
        if spec is not None and spec.submodule_search_locations and _REST_CLIENT not in sys.modules:
            bare = types.ModuleType(_REST_CLIENT)
            bare.__path__, bare.__spec__ = list(spec.submodule_search_locations), spec
            sys.modules[_REST_CLIENT] = bare
            try:
                return _with_core_attribute(importlib.import_module("lancedb"))
            except Exception:  # noqa: BLE001 - retried below with the package's own import
                for name in [n for n, module in sys.modules.items() if module is not None and n != _CORE
                             and n.split(".")[0] in ("lancedb", "lance_namespace", _REST_CLIENT)]:
                    del sys.modules[name]
        return _with_core_attribute(importlib.import_module("lancedb"))


def _with_core_attribute(lancedb: types.ModuleType) -> types.ModuleType:
    # A submodule found already loaded is not set on its package by the import system.
    if _CORE in sys.modules and not hasattr(lancedb, "_lancedb"):
        lancedb._lancedb = sys.modules[_CORE]
    return lancedb


def lancedb_core() -> types.ModuleType | None:
    """lancedb's compiled core without its Python package; None when it cannot be had that way (the
    extra is missing, or lancedb was imported by something that bypassed ``import_lancedb``)."""
    with _loading:
        if (core := sys.modules.get(_CORE)) is not None:
            return core
        if "lancedb" in sys.modules:
            return None
        package = importlib.util.find_spec("lancedb")
        if package is None or not package.submodule_search_locations:
            return None
        spec = importlib.machinery.PathFinder.find_spec(_CORE, list(package.submodule_search_locations))
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return None
        core = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(core)
        sys.modules[_CORE] = core  # the package's own import finds it here later, and never loads it twice
        return core
