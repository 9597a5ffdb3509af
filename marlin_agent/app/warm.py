"""Load ahead what library commands will need, from this machine only.

The resident process has a waiting child do this before the next command arrives; the MCP server
could do the same before its first call. Everything lands in the process-wide caches the commands
use anyway (the shared embedder, the entailment model, WordNet, the certificate store), each of
which checks on use that its files have not changed. Nothing is downloaded: a model that is not
here yet is left to the command, which says how to fetch it.
"""

from __future__ import annotations

import importlib
import threading

from marlin_agent.config import Settings

# What the capabilities' work imports sooner or later that is slow to import or loads native code (none of it
# ONNX Runtime, which must not come before a fork): the MCP server's start-up thread imports it ahead of the
# first call, and the resident, with its front doors' own modules, before it forks the children that run commands.
WORK_MODULES = (
    "numpy", "pyarrow", "lancedb", "lancedb.remote.table", "tokenizers", "av", "httpx", "httpcore", "anyio", "h11",
    "marlin_agent.library.store", "marlin_agent.library.transcripts", "marlin_agent.indexing.run",
    "marlin_agent.marlin.scan", "marlin_agent.tools", "marlin_agent.planners.pipeline",
    "marlin_agent.verification.verifier", "marlin_agent.verification.signals.meaning",
    "marlin_agent.verification.signals.similarity", "marlin_agent.verification.signals.lexical",
    "marlin_agent.app.search", "marlin_agent.app.ask", "marlin_agent.app.describe", "marlin_agent.extraction.job",
    "marlin_agent.extraction.schema",
)

# What can be loaded ahead, by the name a capability declares (``Capability.loads``) and `warm` reports.
EMBEDDER = "embedding model"
ENTAILMENT = "verification model"
WORDNET = "WordNet"
CERTIFICATES = "certificates"


def import_module(name: str) -> None:
    """Import one of ``WORK_MODULES`` (or any module) ahead of its use. lancedb goes through
    ``library.lance_import``, which a command's reads of its compiled core share a lock with."""
    if name.split(".")[0] == "lancedb":
        from marlin_agent.library.lance_import import import_lancedb

        import_lancedb()
    importlib.import_module(name)


def warm(settings: Settings) -> list[str]:
    """Load everything and run each model once (its first run allocates what later runs reuse), for a process
    that waits for work; what was loaded. A failure only means the command will load (or report) it itself."""
    return [name for name in _STEPS if _loaded(name, settings, True)]


def load_ahead(settings: Settings, names: tuple[str, ...]) -> None:
    """Start loading ``names`` beside the work, each on its own thread, and return at once.

    A cold command spends most of its time importing Python modules, which holds the interpreter; an
    ONNX Runtime session is built with it released, so a model loaded beside the imports is ready when
    the work reaches it, at no cost to them. The work's own call to the same cache waits for the load
    under way (each cache loads under its lock) or finds it done. Only loaded, never run: in a process
    that has the models already this costs nothing. The threads are not daemons: a process that ends
    through the interpreter's teardown waits for a load under way instead of tearing ONNX Runtime down
    beneath it (which aborts the process)."""
    for name in names:
        threading.Thread(target=_loaded, args=(name, settings, False), name=f"load {name}").start()


def _loaded(name: str, settings: Settings, first_run: bool) -> bool:
    try:
        return _STEPS[name](settings, first_run)
    except Exception:  # noqa: BLE001 - ahead-of-time loading must never fail a command
        return False


def _embedder(settings: Settings, first_run: bool) -> bool:
    from marlin_agent.library.embeddings import shared_embedder

    embedder = shared_embedder(settings.library.embed_model, settings.cache_dir / "models", settings.graphs_dir)
    if embedder.local_folder() is None:
        return False
    if first_run:
        embedder.embed(["warm"])
    else:
        embedder.load()
    return True


def _entailment(settings: Settings, first_run: bool) -> bool:
    from marlin_agent.model_store import local_model
    from marlin_agent.verification.entailment import entailment_model

    if local_model(settings.verify.model, settings.cache_dir / "models",
                   ["config.json", "tokenizer.json", settings.verify.model_file]) is None:
        return False
    model = entailment_model(settings)
    if first_run:
        model.score([("warm", "warm")])
    else:
        model.load()
    return True


def _wordnet(settings: Settings, first_run: bool) -> bool:
    from marlin_agent.verification.wordnet import find_folder, open_wordnet

    if find_folder(settings.verify.wordnet, settings.cache_dir) is None:
        return False
    open_wordnet(settings.verify.wordnet, settings.cache_dir).base_forms("warmed", "v")
    return True


def _certificates(settings: Settings, first_run: bool) -> bool:
    if not (settings.server.base_url or "").lower().startswith("https:"):
        return False
    from marlin_agent.marlin.transport import tls_context

    tls_context()
    return True


_STEPS = {EMBEDDER: _embedder, ENTAILMENT: _entailment, WORDNET: _wordnet, CERTIFICATES: _certificates}
