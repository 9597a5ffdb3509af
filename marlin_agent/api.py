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
import inspect
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from marlin_agent.app.capabilities import BY_NAME, CAPABILITIES, job_options
from marlin_agent.app.capability import Capability, Param, Role, Run
from marlin_agent.config import FLAG_SETTINGS, Settings, load_settings, with_values
from marlin_agent.errors import InputError


def _sources(sources: str | Path | list[str | Path]) -> list[str]:
    return [str(s) for s in sources] if isinstance(sources, list | tuple) else [str(sources)]


def _taken(param: Param, value: Any) -> Any:
    """A caller's value as the capability takes it: footage as a list of strings, files as paths, every
    constraint of the declaration checked."""
    if value is None or param.role is Role.SCHEMA:  # a schema may also be a pydantic model class here
        return value
    if param.role is Role.SOURCES:
        value = _sources(value)
    elif param.role in (Role.VIDEO, Role.OUTPUT, Role.OUTPUT_FOLDER):
        value = Path(value)
    try:
        return TypeAdapter(param.declared()).validate_python(value)
    except ValidationError as exc:
        raise InputError(f"{param.name}: {exc.errors()[0]['msg']}") from None


def _signature(capability: Capability, returns: str) -> inspect.Signature:
    """A method's signature for ``capability``: its parameters, then the options only the API offers."""
    shown = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    shown += [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=p.default,
                                annotation=p.annotation) for p in capability.params()]
    shown += capability.surface_options()
    return inspect.Signature(shown, return_annotation=returns)


def _arguments(capability: Capability, signature: inspect.Signature, agent: Any, args: tuple,
               kwargs: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments as the capability takes them, every value checked against its declaration."""
    bound = signature.bind(agent, *args, **kwargs)
    bound.apply_defaults()
    given = {name: value for name, value in bound.arguments.items() if name != "self"}
    return {p.name: _taken(p, given.pop(p.name)) for p in capability.params()} | given


def _methods(capability: Capability):
    """The coroutine and the blocking method for ``capability``, with its signature and docstring."""
    signature = _signature(capability, capability.result.split(":")[1])

    async def coroutine(self: VideoAgent, *args: Any, **kwargs: Any) -> Any:
        return await capability(_arguments(capability, signature, self, args, kwargs), self._run())

    def blocking(self: VideoAgent, *args: Any, **kwargs: Any) -> Any:
        return asyncio.run(coroutine(self, *args, **kwargs))

    for function, name in ((coroutine, f"a{capability.name}"), (blocking, capability.name)):
        function.__name__ = function.__qualname__ = name
        function.__doc__ = capability.description
        function.__signature__ = signature
    return coroutine, blocking


# extract's methods yield rows as they land; their parameters are the capability's all the same.
_EXTRACT_SIGNATURE = _signature(BY_NAME["extract"], "AsyncIterator[Any]")


class VideoAgent:
    """Ask questions of footage, search it, caption and ground with Marlin: a method per capability
    (``ask``, ``search``, ``find``, ``caption``, ``describe``, ``index``, ``list_videos``), each with its
    ``a``-prefixed coroutine twin, plus ``extract`` (rows as they land) and ``watch`` (alerts as they happen)."""

    def __init__(self, settings: Settings | None = None, env: Mapping[str, str] | None = None,
                 **overrides: Any) -> None:
        unknown = set(overrides) - set(FLAG_SETTINGS)
        if unknown:
            raise TypeError(f"unknown settings: {', '.join(sorted(unknown))} (known: {', '.join(FLAG_SETTINGS)})")
        self.settings = settings or load_settings({FLAG_SETTINGS[k]: v for k, v in overrides.items()}, env=env)

    def _served(self) -> Settings:
        """The settings with a server: as configured, else the local engine (started on first need)."""
        if not self.settings.server.base_url:
            from marlin_agent.engines import ensure_server

            self.settings = ensure_server(self.settings)
        return self.settings

    def _run(self) -> Run:
        return Run(self.settings, serve=lambda: asyncio.to_thread(self._served))

    async def aextract(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        """Rows matching ``schema`` (a pydantic model class, a JSON Schema dict or file, or "marlin"), written to
        ``output`` as they land and yielded as validated objects: instances of the model class when one was given,
        dicts otherwise. Rows that fail validation are written, not yielded. ``model`` is a pydantic-ai model to
        fill with instead of the configured planner. The parameters are the ``extract`` capability's."""
        from marlin_agent.extraction.job import rows_of

        capability = BY_NAME["extract"]
        arguments, run = _arguments(capability, _EXTRACT_SIGNATURE, self, args, kwargs), self._run()
        arguments = capability.checked(arguments, run)
        settings = with_values(await run.served(), {"planner.model": arguments["planner"]})
        loaded = arguments["schema"]
        async for row in rows_of(loaded, arguments["sources"], settings, arguments["output"], **job_options(arguments)):
            if row.valid:
                yield loaded.model.model_validate(row.data) if loaded.model else row.data

    def extract(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        """``aextract`` for code without an event loop: the rows as they land. Closing the iterator stops the job;
        a run again resumes it."""
        return _read_on_a_thread(lambda stop: self.aextract(*args, **kwargs), graceful=False)

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
        return _read_on_a_thread(lambda stop: self.awatch(sources, ask, notify, backlog, stop), graceful=True)


def _read_on_a_thread(stream: Callable[[asyncio.Event], AsyncIterator[Any]], graceful: bool) -> Iterator[Any]:
    """The items of ``stream(stop)`` for code without an event loop, the one way the blocking methods stream.

    The stream runs on an event loop of its own thread, so its work (a job's next rows, a watch's recordings and
    deliveries) goes on while the caller handles an item; each item is handed over as it lands, and an error is
    raised in the caller. Closing the iterator sets ``stop``: a ``graceful`` stream ends cleanly on it (a watch
    judges the footage in hand), any other is cancelled (an extraction, resumed by the next run); either way the
    thread is waited for."""
    items: queue.Queue = queue.Queue()
    ready: dict[str, Any] = {}
    started, done = threading.Event(), object()

    async def pump() -> None:
        ready.update(loop=asyncio.get_running_loop(), stop=asyncio.Event(), task=asyncio.current_task())
        started.set()
        try:
            async for item in stream(ready["stop"]):
                items.put(item)
        except asyncio.CancelledError:  # closed early: nothing is waiting for an error
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread, raised there
            items.put(exc)
        finally:
            items.put(done)

    def read() -> Iterator[Any]:
        worker = threading.Thread(target=asyncio.run, args=(pump(),), name="marlin-stream", daemon=True)
        worker.start()
        try:
            while (item := items.get()) is not done:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            started.wait()
            try:
                ready["loop"].call_soon_threadsafe(ready["stop"].set if graceful else ready["task"].cancel)
            except RuntimeError:  # the stream had already ended, and its loop with it
                pass
            worker.join()

    return read()


for _capability in CAPABILITIES:
    if _capability.name not in vars(VideoAgent):  # extract yields its rows as they land: written above
        _coroutine, _blocking = _methods(_capability)
        setattr(VideoAgent, _coroutine.__name__, _coroutine)
        setattr(VideoAgent, _blocking.__name__, _blocking)
VideoAgent.aextract.__signature__ = _EXTRACT_SIGNATURE.replace(return_annotation="AsyncIterator[Any]")
VideoAgent.extract.__signature__ = _EXTRACT_SIGNATURE.replace(return_annotation="Iterator[Any]")
