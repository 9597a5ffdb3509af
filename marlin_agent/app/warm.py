"""Load ahead what library commands will need, from this machine only.

The resident process has a waiting child do this before the next command arrives; the MCP server
could do the same before its first call. Everything lands in the process-wide caches the commands
use anyway (the shared embedder, the entailment model, WordNet, the certificate store), each of
which checks on use that its files have not changed. Nothing is downloaded: a model that is not
here yet is left to the command, which says how to fetch it.
"""

from __future__ import annotations

import threading

from marlin_agent.config import Settings

# What can be loaded ahead, by the name a capability declares (``Capability.loads``) and `warm` reports.
EMBEDDER = "embedding model"
ENTAILMENT = "verification model"
WORDNET = "WordNet"
CERTIFICATES = "certificates"


def warm(settings: Settings) -> list[str]:
    """What was loaded; a failure only means the command will load (or report) it itself."""
    return [name for name in _STEPS if _loaded(name, settings)]


def load_ahead(settings: Settings, names: tuple[str, ...]) -> None:
    """Start loading ``names`` beside the work, each on its own thread, and return at once.

    A cold command spends most of its time importing Python modules, which holds the interpreter; an
    ONNX Runtime session is built with it released, so a model loaded beside the imports is ready when
    the work reaches it, at no cost to them. The work's own call to the same cache waits for the load
    under way (each cache loads under its lock) or finds it done."""
    for name in names:
        threading.Thread(target=_loaded, args=(name, settings), name=f"load {name}", daemon=True).start()


def _loaded(name: str, settings: Settings) -> bool:
    try:
        return _STEPS[name](settings)
    except Exception:  # noqa: BLE001 - ahead-of-time loading must never fail a command
        return False


def _embedder(settings: Settings) -> bool:
    from marlin_agent.library.embeddings import shared_embedder

    embedder = shared_embedder(settings.library.embed_model, settings.cache_dir / "models", settings.graphs_dir)
    if embedder.local_folder() is None:
        return False
    embedder.embed(["warm"])  # the first run of a session allocates what later runs reuse
    return True


def _entailment(settings: Settings) -> bool:
    from marlin_agent.model_store import local_model
    from marlin_agent.verification.entailment import entailment_model

    if local_model(settings.verify.model, settings.cache_dir / "models",
                   ["config.json", "tokenizer.json", settings.verify.model_file]) is None:
        return False
    entailment_model(settings).score([("warm", "warm")])
    return True


def _wordnet(settings: Settings) -> bool:
    from marlin_agent.verification.wordnet import find_folder, open_wordnet

    if find_folder(settings.verify.wordnet, settings.cache_dir) is None:
        return False
    open_wordnet(settings.verify.wordnet, settings.cache_dir).base_forms("warmed", "v")
    return True


def _certificates(settings: Settings) -> bool:
    if not (settings.server.base_url or "").lower().startswith("https:"):
        return False
    from marlin_agent.marlin.transport import tls_context

    tls_context()
    return True


_STEPS = {EMBEDDER: _embedder, ENTAILMENT: _entailment, WORDNET: _wordnet, CERTIFICATES: _certificates}
