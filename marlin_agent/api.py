"""The Python API: the same capabilities as the CLI, in a few lines.

    from marlin_agent import VideoAgent
    agent = VideoAgent(base_url="http://127.0.0.1:8000/v1")
    answer = agent.ask("when does the goal happen", "./footage")
    for alert in agent.watch("./camera", ask="when is a parcel delivered"):
        print(alert.wall_start, alert.clip)

Settings follow the CLI's layers (environment, ``$MARLIN_HOME/config.toml``, shipped
defaults); keyword arguments override them like flags do. Each method has an ``a``-prefixed
coroutine twin for code that already runs an event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from marlin_agent.config import Settings, load_settings
from marlin_agent.domain import Answer, FindResult, VideoCaption

_FLAGS = {
    "base_url": "server.base_url", "api_key": "server.api_key", "model": "server.model", "media": "server.media",
    "concurrency": "server.concurrency", "timeout": "server.request_timeout",
    "chunk_seconds": "media.chunk_seconds", "db": "library.db",
    "transcribe": "library.transcribe", "threshold": "agent.threshold", "planner": "planner.model",
    "planner_base_url": "planner.base_url", "planner_api_key": "planner.api_key",
}


def _sources(sources: str | Path | list[str | Path]) -> list[str]:
    return [str(s) for s in sources] if isinstance(sources, list | tuple) else [str(sources)]


class VideoAgent:
    """Ask questions of footage, search it, caption and ground with Marlin."""

    def __init__(self, settings: Settings | None = None, env: Mapping[str, str] | None = None,
                 **overrides: Any) -> None:
        unknown = set(overrides) - set(_FLAGS)
        if unknown:
            raise TypeError(f"unknown settings: {', '.join(sorted(unknown))} (known: {', '.join(_FLAGS)})")
        self.settings = settings or load_settings({_FLAGS[k]: v for k, v in overrides.items()}, env=env)

    def _served(self) -> Settings:
        """The settings with a server: as configured, else the local engine (started on first need)."""
        if not self.settings.server.base_url:
            from marlin_agent.engines import ensure_server

            self.settings = ensure_server(self.settings)
        return self.settings

    async def aask(self, question: str, sources: str | Path | list[str | Path], clips: str | Path | None = None,
                   sheet: str | Path | None = None, planner_model: Any = None) -> Answer:
        from marlin_agent.app.ask import ask

        settings = await asyncio.to_thread(self._served)
        return await ask(question, _sources(sources), settings, clips_dir=Path(clips) if clips else None,
                         sheet=Path(sheet) if sheet else None, planner_model=planner_model)

    def ask(self, question: str, sources: str | Path | list[str | Path], clips: str | Path | None = None,
            sheet: str | Path | None = None, planner_model: Any = None) -> Answer:
        """Verified moments for ``question`` over files, folders or URLs (indexed first if needed).

        ``clips``: a folder to cut each moment into; ``sheet``: a PNG contact sheet to draw;
        ``planner_model``: a pydantic-ai model object to plan with instead of the configured one.
        """
        return asyncio.run(self.aask(question, sources, clips, sheet, planner_model))

    def extract(self, schema, sources: str | Path | list[str | Path], output: str | Path, per: str = "video",
                instructions: str | None = None, model: Any = None, retry_failed: bool = False) -> Iterator[Any]:
        """Rows matching ``schema`` (a pydantic model class, a JSON Schema dict or file, or "marlin"),
        written to ``output`` as they land and yielded as validated objects: instances of the model
        class when one was given, dicts otherwise. Rows that fail validation are written, not yielded.
        ``model`` is a pydantic-ai model to fill with instead of the configured planner."""
        from marlin_agent.extraction.job import rows_of
        from marlin_agent.extraction.schema import load_schema

        loaded = load_schema(schema)
        rows = rows_of(loaded, _sources(sources), self._served(), Path(output), per=per, model=model,
                       instructions=instructions, retry_failed=retry_failed)
        loop = asyncio.new_event_loop()
        try:
            while True:
                try:
                    row = loop.run_until_complete(rows.__anext__())
                except StopAsyncIteration:
                    return
                if row.valid:
                    yield loaded.model.model_validate(row.data) if loaded.model else row.data
        finally:
            loop.run_until_complete(rows.aclose())
            loop.close()

    async def aindex(self, sources: str | Path | list[str | Path]):
        from marlin_agent.indexing.run import index_inputs

        return await index_inputs(_sources(sources), await asyncio.to_thread(self._served))

    def index(self, sources: str | Path | list[str | Path]):
        """Caption and transcribe footage into the library; resumes an interrupted run."""
        return asyncio.run(self.aindex(sources))

    async def asearch(self, query: str, within: str | Path | list[str | Path] | None = None, k: int = 10):
        from marlin_agent.app.search import search_footage

        return await search_footage(query, self.settings, _sources(within) if within else None, k)

    def search(self, query: str, within: str | Path | list[str | Path] | None = None, k: int = 10):
        """The ``k`` best moments in the library for ``query`` (events, scenes, speech)."""
        return asyncio.run(self.asearch(query, within, k))

    def caption(self, video: str | Path, start: float | None = None, end: float | None = None) -> VideoCaption:
        """Marlin's captions for a video, chunk by chunk, with times in the video's seconds."""
        from marlin_agent.marlin import with_client
        from marlin_agent.marlin.scan import caption_video

        settings = self._served()
        return asyncio.run(with_client(settings.server, lambda c: caption_video(Path(video), settings, c, start, end)))

    def find(self, event: str, video: str | Path, start: float | None = None, end: float | None = None) -> FindResult:
        """Marlin's unverified candidate span per chunk for ``event`` (use ``ask`` for verified moments)."""
        from marlin_agent.marlin import with_client
        from marlin_agent.marlin.scan import find_in_video

        settings = self._served()
        return asyncio.run(with_client(settings.server, lambda c: find_in_video(event, Path(video), settings, c, start,
                                                                                end)))

    def describe(self, video: str | Path, max_chars: int = 500, speech: bool = True,
                 time_limit: float | None = None) -> str:
        """A plain-text summary of ``video`` (scenes, timed events, what is said) in at most
        ``max_chars``; from the index when the video is indexed, else from Marlin (within
        ``time_limit`` seconds, if given)."""
        from marlin_agent.app.describe import describe_video

        return asyncio.run(describe_video(Path(video), self._served(), max_chars=max_chars, speech=speech,
                                          time_limit=time_limit))

    async def awatch(self, sources: str | Path | list[str | Path], ask: str | list[str], notify: list[str] = (),
                     backlog: bool = False, stop: asyncio.Event | None = None):
        """``watch`` as an async generator; setting ``stop`` ends it once the footage in hand is judged."""
        from marlin_agent.watch.runner import Watcher

        watcher = Watcher(_sources(sources), [ask] if isinstance(ask, str) else list(ask), self.settings,
                          list(notify), backlog=backlog)
        watcher.settings = await asyncio.to_thread(self._served)
        async for event in watcher.run(stop):
            yield event

    def watch(self, sources: str | Path | list[str | Path], ask: str | list[str], notify: list[str] = (),
              backlog: bool = False) -> Iterator[Any]:
        """Standing questions over folders and live streams: yields each ``Alert`` (and each ``Gap`` in a
        stream's recording) as it happens, for as long as the caller reads. ``notify`` takes the CLI's
        targets (https://…, mqtt://…, cmd:…); closing the generator stops the watch cleanly, and the
        next watch over the same sources resumes where this one stopped."""
        import queue
        import threading

        events: queue.Queue = queue.Queue()
        ready: dict[str, Any] = {}
        started, done = threading.Event(), object()

        async def pump() -> None:
            ready["loop"], ready["stop"] = asyncio.get_running_loop(), asyncio.Event()
            started.set()
            try:
                async for event in self.awatch(sources, ask, notify, backlog, ready["stop"]):
                    events.put(event)
            except BaseException as exc:  # noqa: BLE001 - handed to the reading thread, raised there
                events.put(exc)
            finally:
                events.put(done)

        worker = threading.Thread(target=asyncio.run, args=(pump(),), name="marlin-watch", daemon=True)
        worker.start()
        try:
            while (item := events.get()) is not done:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            started.wait()
            try:
                ready["loop"].call_soon_threadsafe(ready["stop"].set)
            except RuntimeError:  # the watch had already ended (an error), and its loop with it
                pass
            worker.join()
