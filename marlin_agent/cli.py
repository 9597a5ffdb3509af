"""The `marlin-agent` command: parse, call one library function, render. Nothing else."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from marlin_agent import __version__
from marlin_agent.config import Settings, load_settings
from marlin_agent.domain import SCHEMA_VERSION
from marlin_agent.errors import MarlinAgentError

app = typer.Typer(
    name="marlin-agent",
    help="Ask questions of your footage with Marlin-2B: captions, grounded moments, evidence.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
stderr = Console(stderr=True)

# Options shared by every command that talks to Marlin, declared once.
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout; logs go to stderr.")]
BaseUrlOpt = Annotated[Optional[str], typer.Option("--base-url", help="Marlin server API root (env MARLIN_BASE_URL).")]
ApiKeyOpt = Annotated[Optional[str], typer.Option("--api-key", help="API key for the server (env MARLIN_API_KEY).")]
ModelOpt = Annotated[Optional[str], typer.Option("--model", help="Model name the server serves (env MARLIN_MODEL).")]
MediaOpt = Annotated[Optional[str], typer.Option("--media", help="How clips reach the server: auto, file or base64 (env MARLIN_MEDIA).")]
ConcurrencyOpt = Annotated[Optional[int], typer.Option("--concurrency", help="Requests in flight at once.")]
ChunkOpt = Annotated[Optional[float], typer.Option("--chunk-seconds", help="Chunk length; Marlin reads ~60 s at a time.")]
StartOpt = Annotated[Optional[float], typer.Option("--start", help="Only look from this second on.")]
EndOpt = Annotated[Optional[float], typer.Option("--end", help="Only look up to this second.")]
VideoArg = Annotated[Path, typer.Argument(help="A video file.", show_default=False)]


DbOpt = Annotated[Optional[str], typer.Option("--db", help="The index database (default $MARLIN_HOME/index).")]
NoTranscribeOpt = Annotated[bool, typer.Option("--no-transcribe", help="Skip speech transcription this run.")]


def _settings(base_url, api_key, model, media, concurrency, chunk_seconds, **more) -> Settings:
    return load_settings({
        "server.base_url": base_url, "server.api_key": api_key, "server.model": model,
        "server.media": media, "server.concurrency": concurrency, "media.chunk_seconds": chunk_seconds,
        **more,
    })


async def _served(settings: Settings) -> Settings:
    """``settings`` with a server: as configured, else the local engine, started if need be."""
    from marlin_agent.engines import ensure_server

    return await asyncio.to_thread(ensure_server, settings, lambda message: stderr.print(f"[dim]{message}[/]"))


def _redact(text: str, secrets: list[str] | None) -> str:
    """``text`` with each of ``secrets`` (keys) replaced by ***."""
    for secret in secrets or ():
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def _emit_json(document: dict[str, Any], secrets: list[str] | None = None) -> None:
    """One JSON document on stdout; any of ``secrets`` in it is replaced by ***."""
    text = json.dumps({"schema_version": SCHEMA_VERSION, **document}, ensure_ascii=False)
    sys.stdout.write(_redact(text, secrets) + "\n")
    sys.stdout.flush()


@contextmanager
def _progress_bar(label: str, enabled: bool):
    """A progress bar over chunks on stderr; ``None`` when stderr is not a terminal."""
    if not enabled or not stderr.is_terminal:
        yield None
        return
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=stderr, transient=True) as progress:
        task = progress.add_task(label, total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


@contextmanager
def _index_progress(enabled: bool):
    """Overall and per-video bars for indexing runs, on stderr when it is a terminal."""
    if not enabled or not stderr.is_terminal:
        yield None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=stderr, transient=True) as progress:
        overall = progress.add_task("all chunks", total=None)
        per_video: dict[str, int] = {}

        def update(event) -> None:
            progress.update(overall, completed=event.overall_done, total=event.overall_total)
            if event.video not in per_video:
                per_video[event.video] = progress.add_task(f"  {event.video}", total=event.video_total)
            progress.update(per_video[event.video], completed=event.video_done)

        yield update


def _fail(exc: MarlinAgentError, as_json: bool, secrets: list[str] | None = None):
    """Report ``exc`` (a JSON error document, or a message and hint on stderr) and exit with its code."""
    if as_json:
        _emit_json({"error": exc.to_dict()}, secrets)
    else:
        stderr.print(f"[bold red]error:[/] {_redact(exc.message, secrets)}")
        if exc.hint:
            stderr.print(f"[dim]hint:[/] {_redact(exc.hint, secrets)}")
    raise typer.Exit(exc.exit_code) from None


def _run(as_json: bool, work: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``work``; turn our errors into a JSON error or a one-line message and an exit code."""
    try:
        return asyncio.run(work())
    except MarlinAgentError as exc:
        _fail(exc, as_json)
    except KeyboardInterrupt:
        stderr.print("interrupted")
        raise typer.Exit(130) from None


def _version(value: bool) -> None:
    if value:
        print(f"marlin-agent {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")] = False,
) -> None:
    """Ask questions of your footage with Marlin-2B."""


def _scan_command(as_json: bool, label: str, flags: tuple, run, fields: set[str], show) -> None:
    """Shared body of the chunk-by-chunk commands: settings, client, progress, output."""
    from marlin_agent.marlin import MarlinClient

    async def work():
        settings = await _served(_settings(*flags))
        async with MarlinClient(settings.server) as client:
            with _progress_bar(label, not as_json) as progress:
                result = await run(settings, client, progress)
            return result, client.usage.calls

    result, calls = _run(as_json, work)
    if as_json:
        _emit_json({**result.model_dump(mode="json", include=fields), "usage": {"marlin_calls": calls}})
    else:
        show(Console(), result)


@app.command("caption")
def caption_command(
    video: VideoArg, start: StartOpt = None, end: EndOpt = None, as_json: JsonOpt = False,
    base_url: BaseUrlOpt = None, api_key: ApiKeyOpt = None, model: ModelOpt = None, media: MediaOpt = None,
    concurrency: ConcurrencyOpt = None, chunk_seconds: ChunkOpt = None,
) -> None:
    """Describe a video: a scene paragraph per ~60 s chunk and time-ranged events."""
    from marlin_agent.render import show_caption
    from marlin_agent.scan import caption_video

    _scan_command(
        as_json, "captioning", (base_url, api_key, model, media, concurrency, chunk_seconds),
        lambda settings, client, progress: caption_video(video, settings, client, start, end, progress),
        {"video", "chunks", "events", "failures"}, show_caption,
    )


@app.command("describe")
def describe_command(
    video: VideoArg,
    max_chars: Annotated[int, typer.Option("--max-chars", min=40, help="Longest summary to print, in characters.")] = 2000,
    no_speech: Annotated[bool, typer.Option("--no-speech", help="Leave out what is said (no transcription).")] = False,
    base_url: BaseUrlOpt = None, api_key: ApiKeyOpt = None, model: ModelOpt = None, media: MediaOpt = None,
    concurrency: ConcurrencyOpt = None, chunk_seconds: ChunkOpt = None,
) -> None:
    """Print a plain-text summary of a video (scenes, timed events, speech) for hosts that want prose."""
    from marlin_agent.describe import describe_text
    from marlin_agent.marlin import MarlinClient
    from marlin_agent.scan import caption_video
    from marlin_agent.transcripts import speech_of

    async def work():
        settings = await _served(_settings(base_url, api_key, model, media, concurrency, chunk_seconds))
        async with MarlinClient(settings.server) as client:
            result = await caption_video(video, settings, client)
        speech = None if no_speech else await speech_of(result.video, settings, warn=stderr.print)
        return result, speech

    result, speech = _run(False, work)
    print(describe_text(result, max_chars, speech))


@app.command("find")
def find_command(
    event: Annotated[str, typer.Argument(help='The event to ground, e.g. "a red ball rolls in".', show_default=False)],
    video: VideoArg, start: StartOpt = None, end: EndOpt = None, as_json: JsonOpt = False,
    verify: Annotated[bool, typer.Option("--verify", help="Index the video and return verified moments with evidence (the `ask` document) instead of raw candidates.")] = False,
    db: DbOpt = None, no_transcribe: NoTranscribeOpt = False,
    base_url: BaseUrlOpt = None, api_key: ApiKeyOpt = None, model: ModelOpt = None, media: MediaOpt = None,
    concurrency: ConcurrencyOpt = None, chunk_seconds: ChunkOpt = None,
) -> None:
    """Ground an event: one candidate span per chunk searched, best first (unverified unless --verify)."""
    from marlin_agent.render import show_answer, show_find
    from marlin_agent.scan import find_in_video

    if verify:
        from marlin_agent.planners.run import verify_find

        _library_command(
            as_json, (base_url, api_key, model, media, concurrency, chunk_seconds), db, no_transcribe,
            lambda settings, progress: verify_find(event, video, settings, start, end, progress), {}, show_answer,
        )
        return
    _scan_command(
        as_json, "grounding", (base_url, api_key, model, media, concurrency, chunk_seconds),
        lambda settings, client, progress: find_in_video(event, video, settings, client, start, end, progress),
        {"query", "video", "candidates", "failures"}, show_find,
    )


def _library_command(as_json: bool, flags: tuple, db, no_transcribe: bool, run, dump: dict, show,
                     more: dict | None = None, needs_server: bool = True) -> None:
    """Shared body of the commands that work on the library: settings, progress, output."""

    async def work():
        settings = _settings(*flags, **{"library.db": db, "library.transcribe": False if no_transcribe else None},
                             **(more or {}))
        if needs_server:
            settings = await _served(settings)
        with _index_progress(not as_json) as progress:
            return await run(settings, progress)

    result = _run(as_json, work)
    if as_json:
        _emit_json(result.model_dump(mode="json", **dump))
    else:
        show(Console(), result)


@app.command("index")
def index_command(
    sources: Annotated[list[str], typer.Argument(help="Video files, folders (recursive) or URLs.", show_default=False)],
    db: DbOpt = None, no_transcribe: NoTranscribeOpt = False, as_json: JsonOpt = False,
    base_url: BaseUrlOpt = None, api_key: ApiKeyOpt = None, model: ModelOpt = None, media: MediaOpt = None,
    concurrency: ConcurrencyOpt = None, chunk_seconds: ChunkOpt = None,
) -> None:
    """Caption and transcribe footage into the library; resumes where an earlier run stopped."""
    from marlin_agent.indexer import index_inputs
    from marlin_agent.render import show_index_report

    _library_command(
        as_json, (base_url, api_key, model, media, concurrency, chunk_seconds), db, no_transcribe,
        lambda settings, progress: index_inputs(sources, settings, on_progress=progress), {}, show_index_report,
    )


@app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(help="What to look for, in words.", show_default=False)],
    within: Annotated[Optional[list[str]], typer.Option("--in", help="Only these files, folders or URLs (indexed first if needed). Repeatable.")] = None,
    k: Annotated[int, typer.Option("-k", "--limit", min=1, max=200, help="How many moments to return.")] = 10,
    db: DbOpt = None, no_transcribe: NoTranscribeOpt = False, as_json: JsonOpt = False,
    base_url: BaseUrlOpt = None, api_key: ApiKeyOpt = None, model: ModelOpt = None, media: MediaOpt = None,
    concurrency: ConcurrencyOpt = None, chunk_seconds: ChunkOpt = None,
) -> None:
    """Search indexed footage: events, scenes and speech, by words and by meaning."""
    from marlin_agent.render import show_search
    from marlin_agent.search import search_footage

    _library_command(
        as_json, (base_url, api_key, model, media, concurrency, chunk_seconds), db, no_transcribe,
        lambda settings, progress: search_footage(query, settings, within, k, progress),
        {"include": {"query", "results"}}, show_search, needs_server=bool(within),
    )


@app.command("ask")
def ask_command(
    question: Annotated[str, typer.Argument(help='A question about the footage, e.g. "when does the goal happen".', show_default=False)],
    within: Annotated[list[str], typer.Option("--in", help="Files, folders or URLs to answer over (indexed first if needed). Repeatable.")],
    db: DbOpt = None, no_transcribe: NoTranscribeOpt = False, as_json: JsonOpt = False,
    threshold: Annotated[Optional[float], typer.Option("--threshold", min=0, max=1, help="Confidence a moment needs to count as found.")] = None,
    clips: Annotated[Optional[Path], typer.Option("--clips", help="Cut each moment found into a video file in this folder.")] = None,
    sheet: Annotated[Optional[Path], typer.Option("--sheet", help="Write a contact sheet (PNG): a labelled thumbnail strip per moment.")] = None,
    planner: Annotated[Optional[str], typer.Option("--planner", help='"pipeline" (no LLM, default) or a planner model: provider/name, or a name served at MARLIN_PLANNER_BASE_URL (env MARLIN_PLANNER).')] = None,
    base_url: BaseUrlOpt = None, api_key: ApiKeyOpt = None, model: ModelOpt = None, media: MediaOpt = None,
    concurrency: ConcurrencyOpt = None, chunk_seconds: ChunkOpt = None,
) -> None:
    """Answer a question with verified moments (video, span, confidence, evidence) or an honest "not found"."""
    from marlin_agent.planners.run import ask
    from marlin_agent.render import show_answer

    _library_command(
        as_json, (base_url, api_key, model, media, concurrency, chunk_seconds), db, no_transcribe,
        lambda settings, progress: ask(question, within, settings, progress, clips, sheet), {}, show_answer,
        more={"agent.threshold": threshold, "planner.model": planner},
    )


@app.command("extract")
def extract_command(
    schema: Annotated[str, typer.Option("--schema", help='A JSON Schema file for one row, or "marlin" for Marlin\'s own scenes and events (no LLM).')],
    within: Annotated[list[str], typer.Option("--in", help="Files, folders or URLs (indexed first if needed). Repeatable.")],
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="OUT.jsonl or OUT.parquet; a re-run resumes it.")] = None,
    per: Annotated[str, typer.Option("--per", help="One row per video (chunks merged in time order) or per chunk.")] = "video",
    planner: Annotated[Optional[str], typer.Option("--planner", help="The LLM that fills the schema: provider/name, or a name served at MARLIN_PLANNER_BASE_URL.")] = None,
    instructions: Annotated[Optional[str], typer.Option("--instructions", help="Extra guidance for the LLM.")] = None,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="Fill again the rows that failed validation.")] = False,
    db: DbOpt = None, no_transcribe: NoTranscribeOpt = False, as_json: JsonOpt = False,
    base_url: BaseUrlOpt = None, api_key: ApiKeyOpt = None, model: ModelOpt = None, media: MediaOpt = None,
    concurrency: ConcurrencyOpt = None, chunk_seconds: ChunkOpt = None,
) -> None:
    """Turn footage into rows that match a JSON Schema: written as they land, resumable, failures kept."""
    from marlin_agent.extraction.job import extract
    from marlin_agent.extraction.schema import load_schema
    from marlin_agent.render import show_extract

    if per not in ("video", "chunk"):
        raise typer.BadParameter("--per is video or chunk")

    async def run(settings, progress):
        loaded = load_schema(schema)
        target = output or Path(f"{loaded.name}.jsonl")
        return await extract(loaded, within, settings, target, per=per, instructions=instructions,
                             retry_failed=retry_failed, on_progress=progress)

    _library_command(as_json, (base_url, api_key, model, media, concurrency, chunk_seconds), db, no_transcribe, run,
                     {}, show_extract, more={"planner.model": planner})


@app.command("mcp")
def mcp_command(
    roots: Annotated[Optional[list[Path]], typer.Option("--root", help="A folder the tools may read and write (repeatable; env MARLIN_MCP_ROOTS; default: the current folder).")] = None,
    db: DbOpt = None,
    base_url: BaseUrlOpt = None, api_key: ApiKeyOpt = None, model: ModelOpt = None, media: MediaOpt = None,
    concurrency: ConcurrencyOpt = None, chunk_seconds: ChunkOpt = None,
) -> None:
    """Serve the tools (ask, search, find, caption, index, extract, list_videos) over MCP on stdio."""
    try:
        from marlin_agent.mcp_server import serve_stdio
    except ImportError as exc:
        stderr.print(f"[bold red]error:[/] the MCP server needs the mcp extra ({exc.name} is missing)")
        stderr.print("[dim]hint:[/] pip install 'marlin-agent[mcp]'")
        raise typer.Exit(2) from None
    try:
        settings = _settings(base_url, api_key, model, media, concurrency, chunk_seconds, **{"library.db": db})
    except MarlinAgentError as exc:
        stderr.print(f"[bold red]error:[/] {exc.message}")
        raise typer.Exit(exc.exit_code) from None
    serve_stdio(settings, [str(r) for r in roots] if roots else None)


# Registered last: the eval commands reuse the options and helpers above.
from marlin_agent import cli_setup  # noqa: E402,F401  (registers setup and doctor)
from marlin_agent.cli_engine import engine_app  # noqa: E402
from marlin_agent.cli_eval import eval_app  # noqa: E402

app.add_typer(eval_app, name="eval")
app.add_typer(engine_app, name="engine")
