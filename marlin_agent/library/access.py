"""Opening the library a configuration names: the one entry point for every reader and writer."""

from __future__ import annotations

from marlin_agent.config import Settings
from marlin_agent.library.embeddings import shared_embedder
from marlin_agent.library.store import Library


def open_library(settings: Settings) -> Library:
    return Library(settings.db_path, shared_embedder(settings.library.embed_model, settings.cache_dir / "models",
                                                     graphs=settings.graphs_dir))


