"""Index footage: the entry points that resolve sources, open the library, take the lock and run the indexer.

Resumable by construction: each chunk is stored the moment its caption lands, chunks already
stored are never asked about again, and chunks that failed are retried on the next run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path

from marlin_agent.config import Settings
from marlin_agent.errors import IndexBusy
from marlin_agent.file_names import text_path
from marlin_agent.indexing.indexer import Indexer
from marlin_agent.indexing.reports import IndexProgress, IndexReport, Recaption, ShardBy
from marlin_agent.indexing.shards import Shard
from marlin_agent.indexing.write_lock import WriteLock
from marlin_agent.library.access import open_library
from marlin_agent.library.health import left_after_repair, repair
from marlin_agent.library.store import Library
from marlin_agent.library.transcripts import Transcriber, transcriber_for
from marlin_agent.marlin.client import MarlinClient
from marlin_agent.media.address_guard import internal
from marlin_agent.media.download import download_url
from marlin_agent.media.sources import ResolvedSources, require_videos, resolve_sources

log = logging.getLogger(__name__)


async def repair_and_index(inputs: list[str], settings: Settings,
                           on_progress: Callable[[IndexProgress], None] | None = None) -> IndexReport:
    """Mend the index (``library.health.repair``), then index ``inputs``, or every stored video whose file
    is still there: the chunks the repair had to forget are captioned again."""
    library = await asyncio.to_thread(open_library, settings)
    mended = await asyncio.to_thread(repair, library)
    if not inputs:
        stored = await asyncio.to_thread(library.list_videos)
        inputs = [str(text_path(v.path)) for v in stored if text_path(v.path).is_file()]
    report = await index_inputs(inputs, settings, library, on_progress) if inputs else IndexReport()
    if inputs and mended.problems_left:  # the footage may have given back what the repair could not
        mended.problems_left = await asyncio.to_thread(left_after_repair, library)
    report.repair = mended
    return report


def resolve(inputs: list[str], settings: Settings) -> ResolvedSources:
    forbidden = None if settings.library.internal_urls else internal
    resolved = resolve_sources(inputs, download=lambda url: download_url(url, settings.cache_dir, forbidden),
                               within=[Path(folder) for folder in settings.library.confine_to] or None)
    require_videos(resolved, inputs)
    return resolved


async def index_inputs(inputs: list[str], settings: Settings, library: Library | None = None,
                       on_progress: Callable[[IndexProgress], None] | None = None,
                       recaption: Recaption | None = None, shard: Shard | None = None,
                       shard_by: ShardBy = "chunk", transcriber: Transcriber | None = None) -> IndexReport:
    """Resolve files, folders and URLs, and index whatever is not indexed yet (or, with
    ``recaption``, caption again every chunk, or the ones that failed); with ``shard``, only
    that shard's share, leaving compaction to ``finalize``. A caller that indexes again and again
    (a watch) passes its own ``transcriber``, so Whisper loads once."""
    library = library or await asyncio.to_thread(open_library, settings)
    if not settings.library.transcribe:
        transcriber = None
    elif transcriber is None:
        transcriber = transcriber_for(settings)
    # The embedding model, found or fetched now: with no hub and no copy, say so in seconds rather
    # than after the first Marlin answers. (Whisper's, once a video turns out to need a transcript.)
    await asyncio.to_thread(library.embedder.folder)
    resolved = await asyncio.to_thread(resolve, inputs, settings)

    client = MarlinClient(settings.server) if settings.server.base_url else None
    # Shards of one job write disjoint rows, so they must not wait for each other's lock.
    lock = None if shard else WriteLock(settings.db_path, settings.library.lock_wait)
    if shard is not None:
        await asyncio.to_thread(tables_for_shards, library, shard, settings.library.lock_wait)
    try:
        indexer = Indexer(settings, library, client, transcriber, on_progress, recaption, lock, shard, shard_by)
        return await indexer.run(resolved.videos, resolved.skipped)
    finally:
        if lock is not None:
            lock.release()
        if client is not None:
            await client.close()


def tables_for_shards(library: Library, shard: Shard, wait: float) -> None:
    """Shard 0 creates the tables; the others wait for them (up to ``wait`` seconds), since two
    processes creating one table at the same moment on an object store lose one's writes."""
    if library.tables_ready():
        return
    if shard.index == 0:
        library.create_tables()
        return
    deadline, said = time.monotonic() + wait, False
    while not library.tables_ready():
        if time.monotonic() >= deadline:
            raise IndexBusy(f"shard 0 has not created the tables of {library.uri} (waited {wait:.0f} s)",
                            hint="Start shard 0 of the job (it creates the tables once), then this shard again; "
                                 "or raise [library] lock_wait.")
        if not said:
            log.warning("waiting for shard 0 to create the tables of %s (up to %.0f s)", library.uri, wait)
            said = True
        time.sleep(0.5)


