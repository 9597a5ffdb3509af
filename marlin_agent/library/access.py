"""Opening the library a configuration names: the one entry point for every reader and writer."""

from __future__ import annotations

from marlin_agent.config import Settings
from marlin_agent.library.embeddings import shared_embedder
from marlin_agent.library.store import Library
from marlin_agent.library.stores import open_store


def open_library(settings: Settings) -> Library:
    embedder = shared_embedder(settings.library.embed_model, settings.cache_dir / "models", graphs=settings.graphs_dir)
    return Library(settings.db_path, embedder, open_store(settings.library.store, settings.db_path))


