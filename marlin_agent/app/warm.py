"""Load ahead what library commands will need, from this machine only.

The resident process has a waiting child do this before the next command arrives; the MCP server
could do the same before its first call. Everything lands in the process-wide caches the commands
use anyway (the shared embedder, the entailment model, WordNet, the certificate store), each of
which checks on use that its files have not changed. Nothing is downloaded: a model that is not
here yet is left to the command, which says how to fetch it.
"""

from __future__ import annotations

from marlin_agent.config import Settings


def warm(settings: Settings) -> list[str]:
    """What was loaded; a failure only means the command will load (or report) it itself."""
    loaded: list[str] = []
    steps = (("embedding model", _embedder), ("verification model", _entailment), ("WordNet", _wordnet),
             ("certificates", _certificates))
    for name, step in steps:
        try:
            if step(settings):
                loaded.append(name)
        except Exception:  # noqa: BLE001 - ahead-of-time loading must never fail a command
            pass
    return loaded


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
