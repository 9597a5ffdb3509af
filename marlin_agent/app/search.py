"""Search the footage library, optionally limited to (and first indexing) named sources."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.domain import SCHEMA_VERSION, SchemaVersion
from marlin_agent.errors import EmptyQuery
from marlin_agent.indexing.reports import IndexProgress, IndexReport
from marlin_agent.library.records import SearchHit


class SearchResult(BaseModel):
    schema_version: SchemaVersion = SCHEMA_VERSION
    query: str
    results: list[SearchHit]
    index: IndexReport | None = None


async def search_footage(query: str, settings: Settings, within: list[str] | None = None, k: int = 10,
                         on_progress: Callable[[IndexProgress], None] | None = None,
                         among: set[str] | None = None) -> SearchResult:
    """The ``k`` best moments for ``query``; ``within`` limits them to those files, folders or URLs
    (indexed first), ``among`` to those video ids (what a confined caller may see). An empty query is refused
    before anything is opened."""
    if not query.strip():
        raise EmptyQuery("the search query is empty", hint="Say what to look for, e.g. \"a red car turns left\".")
    from marlin_agent.library.access import open_library  # the result type alone (a tool list) needs no library

    library = await asyncio.to_thread(open_library, settings)
    await asyncio.to_thread(library.embedder.folder)  # no model, no search: say so before anything else
    report = None
    video_ids = None
    if within:
        from marlin_agent.indexing.run import index_inputs  # indexing's modules (Marlin's client) only when needed

        report = await index_inputs(within, settings, library, on_progress)
        video_ids = [v.id for v in report.videos]
    if among is not None:
        video_ids = sorted(among if video_ids is None else among.intersection(video_ids))
    hits = await asyncio.to_thread(library.search, query, k, video_ids)
    return SearchResult(query=query, results=hits, index=report)
