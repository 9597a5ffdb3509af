"""Every capability of the agent, declared once: the CLI's commands, the MCP server's tools and
``VideoAgent``'s methods are built from ``CAPABILITIES``.

A new Marlin-backed capability is a function here (its parameters typed and described, its
docstring the text every front door shows) and its entry in the table. See ``app.capability``
for what a capability may declare.

This module is imported by the CLI at start, so it imports nothing heavy: each function loads
what its work needs, and result types are named, not imported.
"""

import asyncio
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from marlin_agent.app.capability import Capability, Role, Run
from marlin_agent.app.warm import EMBEDDER, ENTAILMENT
from marlin_agent.config import with_values
from marlin_agent.errors import InputError
from marlin_agent.file_names import safe_stem

# The parameters several capabilities share, described once.
Sources = Annotated[list[str], Role.SOURCES, Field(
    description="Video files, folders (recursive) or URLs; what is not indexed yet is indexed first.")]
Video = Annotated[Path, Role.VIDEO, Field(description="A video file.")]
ShardOf = Annotated[str | None, Field(
    pattern=r"^\s*\d+\s*/\s*\d+\s*$",
    description='Do shard I of N ("I/N", 0-based): this shard\'s share of the videos, for a job split across machines '
                "(an index is finalized, an extraction's parts joined, once every shard is done).")]
Start = Annotated[float | None, Field(ge=0, description="Only look from this second on.")]
End = Annotated[float | None, Field(ge=0, description="Only look up to this second.")]
Planner = Annotated[str | None, Field(
    description='The LLM to use: "provider/name", or a model served at the configured planner base URL; '
                "default: the configured [planner] model.")]


async def caption(video: Video, start: Start = None, end: End = None, *, run: Run) -> "VideoCaption":  # noqa: F821
    """Marlin's dense captions for one video: a scene paragraph per ~60 s chunk and time-ranged events."""
    from marlin_agent.marlin import with_client
    from marlin_agent.marlin.scan import caption_video

    settings = await run.served()
    return await with_client(settings.server,
                             lambda client: caption_video(video, settings, client, start, end, run.on_chunks))


async def find(
    event: Annotated[str, Field(min_length=1, description='The event to ground, e.g. "a red ball rolls in".')],
    video: Video, start: Start = None, end: End = None, *, run: Run,
) -> "FindResult":  # noqa: F821
    """Marlin's raw candidate span per ~60 s chunk for an event in one video, best first.

    Unverified: Marlin proposes a span even for events that never happen. Ask for verified moments."""
    from marlin_agent.marlin import with_client
    from marlin_agent.marlin.scan import find_in_video

    settings = await run.served()
    return await with_client(settings.server,
                             lambda client: find_in_video(event, video, settings, client, start, end, run.on_chunks))


async def find_verified(
    event: Annotated[str, Field(min_length=1, description='The event to find, e.g. "a red ball rolls in".')],
    video: Video, start: Start = None, end: End = None, *, run: Run,
) -> "Answer":  # noqa: F821
    """Every moment of an event in one video, verified: the video indexed, Marlin's span in each ~60 s chunk
    grounded and checked against the captions and speech there, each with its evidence and confidence.

    Exhaustive over the one video (every chunk is grounded), where ask retrieves a few windows over many."""
    from marlin_agent.app.ask import verify_find

    return await verify_find(event, video, await run.served(), start, end, run.on_index)


# describe's defaults are app.describe's DEFAULT_MAX_CHARS and DEFAULT_TIME_LIMIT (OpenClaw's budget), written
# here as numbers: importing that module would make it and this table import each other.
async def describe(
    video: Video,
    max_chars: Annotated[int, Field(ge=40, description="The longest summary, in characters (OpenClaw keeps 500 by "
                                                       "default).")] = 500,
    speech: Annotated[bool, Field(description="Include what is said (transcribed).")] = True,
    time_limit: Annotated[float | None, Field(ge=0, description="Seconds to spend at most (0: no limit); a video not "
                                                                "indexed yet is described as far as it got.")] = 100.0,
    *, run: Run,
) -> "str":
    """A plain-text summary of a video (scenes, timed events, what is said) for hosts that want prose.

    From the index when the video is indexed, at once; else from Marlin within the time limit."""
    from marlin_agent.app.describe import describe_video

    return await describe_video(video, run.settings, max_chars=max_chars, speech=speech, time_limit=time_limit or None,
                                serve=lambda _: run.served(), warn=run.say)


async def list_videos(*, run: Run) -> "VideoList":  # noqa: F821
    """The indexed videos: path, duration, how many chunks are indexed, whether there is speech.

    A caller confined to roots (MCP) sees the videos inside them and those fetched from URLs."""
    from marlin_agent.library.access import open_library
    from marlin_agent.tools import Toolbox
    from marlin_agent.tools.run_context import RunContext

    library = await asyncio.to_thread(open_library, run.settings)
    listed = await Toolbox(run.settings, library, None).list_videos(RunContext())
    if run.visible is None:
        return listed
    shown = [entry for entry in listed.videos if run.visible(entry.video.path, entry.url)]
    return listed.model_copy(update={"videos": shown, "roots": run.roots or []})


async def _visible_ids(run: Run) -> set[str] | None:
    """The videos a confined caller may see; None when the caller is not confined."""
    if run.visible is None:
        return None
    from marlin_agent.library.access import open_library

    library = await asyncio.to_thread(open_library, run.settings)
    return {v.id for v in await asyncio.to_thread(library.list_videos) if run.visible(v.path, v.url)}


async def search(
    query: Annotated[str, Field(min_length=1, description="What to look for, in words.")],
    sources: Annotated[list[str] | None, Role.SOURCES, Field(
        description="Only these files, folders or URLs (indexed first if needed); default: everything indexed.")]
    = None,
    k: Annotated[int, Field(ge=1, le=200, description="How many moments to return.")] = 10,
    *, run: Run,
) -> "SearchResult":  # noqa: F821
    """Rank indexed moments (events, scenes, speech) for a query, by words and by meaning. Unverified: ask verifies."""
    from marlin_agent.app.search import search_footage

    # Named sources are the videos shown (and indexed first); otherwise the top k among what the caller may see,
    # not the top k of a shared index cut afterwards.
    among = None if sources else await _visible_ids(run)
    return await search_footage(query, run.settings, sources, k, run.on_index, among=among)


async def ask(
    question: Annotated[str, Field(min_length=1, description='A question about the footage, e.g. "when does the goal '
                                                             'happen".')],
    sources: Sources,
    threshold: Annotated[float | None, Field(ge=0, le=1, description="Confidence a moment needs to count as found "
                                                                     "(default: the calibrated one).")] = None,
    planner: Annotated[str | None, Field(description='"pipeline" (no LLM, the default) or a planner model: '
                                                     '"provider/name", or a model served at the configured planner '
                                                     "base URL.")] = None,
    clips: Annotated[Path | None, Role.OUTPUT_FOLDER, Field(description="Cut each moment found into a video file in "
                                                                        "this folder.")] = None,
    sheet: Annotated[Path | None, Role.OUTPUT, Field(description="Write a contact sheet (PNG): a labelled thumbnail "
                                                                 "strip per moment.")] = None,
    overwrite: Annotated[bool, Field(description="Replace an existing file at sheet (or the page) that this tool "
                                                 "did not write; without it such a file is refused, untouched.")]
    = False,
    *, run: Run, page: Path | None = None, planner_model: Any = None,
) -> "Answer":  # noqa: F821
    """Answer a question about footage with verified moments (video, span, confidence, evidence) or an honest
    "not found".

    Beyond "when": every time, how many, what happens before or after, first and last, how long."""
    from marlin_agent.app.ask import ask as answer

    settings = with_values(await run.served(), {"agent.threshold": threshold, "planner.model": planner})
    return await answer(question, sources, settings, run.on_index, clips, sheet, planner_model=planner_model,
                        page=page, overwrite=overwrite)


async def index(
    sources: Sources,
    recaption: Annotated[Literal["all", "failed"] | None, Field(
        description="Caption chunks again: all of them (after a model or prompt change), or only those whose last "
                    "caption failed or broke Marlin's format.")] = None,
    shard: ShardOf = None,
    repair: Annotated[bool, Field(
        description="First mend a damaged index (rebuild missing search indexes, return damaged chunks to be "
                    "captioned again), then index the sources (none given: every stored video still on disk)."
    )] = False,
    *, run: Run,
) -> "IndexReport":  # noqa: F821
    """Caption and transcribe footage into the library (captions, transcripts, search index); resumes where an
    earlier run stopped."""
    from marlin_agent.indexing.run import index_inputs, repair_and_index

    if repair:
        return await repair_and_index(sources or [], await run.served(), run.on_index)
    # ``shard`` arrives read (``_indexing``), as extract's does.
    return await index_inputs(sources, await run.served(), on_progress=run.on_index, recaption=recaption,
                              shard=shard)


async def finalize(*, run: Run) -> "FinalizeReport":  # noqa: F821
    """After every shard of a sharded index has finished: compact the index, build its vector index, and say which
    shards or chunks are missing. Run it once; it reads no footage and needs no Marlin server."""
    from marlin_agent.scale.finalize import finalize_library

    return await finalize_library(run.settings)


def _indexing(arguments: dict[str, Any], run: Run) -> dict[str, Any]:
    """What cannot go together is refused before any footage is read (and before a job starts); the shard read."""
    from marlin_agent.indexing.shards import Shard

    shard = None if arguments.get("shard") is None else Shard.parse(arguments["shard"])  # one that does not exist
    if arguments.get("repair"):
        if arguments.get("recaption") is not None or shard is not None:
            raise InputError("repair goes alone: run it once, then shard or recaption as usual")
        if run.confined and not arguments.get("sources"):  # every stored video may lie outside the caller's roots
            raise InputError("give the footage to index again after the repair")
    return arguments | {"shard": shard}


def _extraction(arguments: dict[str, Any], run: Run) -> dict[str, Any]:
    """The schema loaded and the output claimed before any footage is touched: a bad schema, an output that is not
    this job's own, or a custom schema with no LLM to fill it is refused at once."""
    from marlin_agent.extraction.job import check_output, claim, filling_model
    from marlin_agent.extraction.schema import load_schema
    from marlin_agent.indexing.shards import Shard

    shard = None if arguments.get("shard") is None else Shard.parse(arguments["shard"])  # before the schema is read

    # A caller confined to roots gives a schema whose $refs stay inside it; the command line may name files beside.
    loaded = load_schema(arguments["schema"], files_beside=not run.confined)
    # The title is the schema author's text, never a path: it only names a file where unnamed outputs go.
    target = arguments.get("output") or run.output_for(safe_stem(loaded.name, "rows"), ".jsonl")
    check_output(target)
    if not arguments.get("overwrite") and arguments.get("shard") is None:
        claim(target, loaded)
    settings = with_values(run.settings, {"planner.model": arguments.get("planner")})
    filling_model(loaded, settings, arguments.get("model"))
    return arguments | {"schema": loaded, "output": target, "shard": shard}


async def extract(
    schema: Annotated[dict[str, Any] | str, Role.SCHEMA, Field(
        description='A JSON Schema for one row (an object, or a file that holds one), or "marlin" for Marlin\'s own '
                    "scenes and events without an LLM. Its $refs resolve only inside it; nothing is fetched.")],
    sources: Sources,
    output: Annotated[Path | None, Role.OUTPUT, Field(
        description="OUT.jsonl or OUT.parquet; a run again resumes it. Default: a file named after the schema's "
                    "title.")] = None,
    per: Annotated[Literal["video", "chunk"], Field(
        description="One row per video (chunks merged in time order) or per chunk.")] = "video",
    instructions: Annotated[str | None, Field(description="Extra guidance for the LLM.")] = None,
    planner: Planner = None,
    overwrite: Annotated[bool, Field(
        description="Replace an output file that is not this job's own (another tool's, or another schema's rows); "
                    "without it such a file is refused, untouched.")] = False,
    retry_failed: Annotated[bool, Field(description="Fill again the rows that failed validation.")] = False,
    shard: ShardOf = None,
    *, run: Run, model: Any = None,
) -> "ExtractSummary":  # noqa: F821
    """Turn footage into rows that match a JSON Schema: written as they land, resumable, failures kept."""
    arguments = dict(locals())  # first, so that it holds the parameters and nothing else
    from marlin_agent.extraction.job import extract as extract_rows

    settings = with_values(await run.served(), {"planner.model": planner})
    return await extract_rows(schema, sources, settings, output, on_progress=run.on_index, **job_options(arguments))


# What a front door resolves before an extraction job starts; every other argument of ``extract`` is the job's.
_RESOLVED_FIRST = frozenset({"schema", "sources", "output", "planner", "run"})


def job_options(arguments: dict[str, Any]) -> dict[str, Any]:
    """``extract``'s arguments as every way of running the job takes them (in this process, as rows for the API,
    on Ray): by the capability's own names, so that a parameter added to ``extract`` reaches each of them, and a
    runner that does not take it fails loudly rather than dropping it."""
    return {name: value for name, value in arguments.items() if name not in _RESOLVED_FIRST}


# The order is the order the front doors list them in. What a capability ``loads`` ahead is what builds with the
# interpreter free (ONNX Runtime sessions); WordNet is read in Python, and beside the imports it would only slow them.
CAPABILITIES: tuple[Capability, ...] = (
    Capability(ask, "marlin_agent.domain:Answer", "answering", writes="files", fetches=True,
               loads=(EMBEDDER, ENTAILMENT)),
    Capability(search, "marlin_agent.app.search:SearchResult", "searching", fetches=True,
               needs_server=lambda arguments: bool(arguments.get("sources")), loads=(EMBEDDER,)),
    Capability(find, "marlin_agent.domain:FindResult", "grounding", library=False),
    Capability(find_verified, "marlin_agent.domain:Answer", "verifying", writes="index", loads=(EMBEDDER, ENTAILMENT)),
    Capability(caption, "marlin_agent.domain:VideoCaption", "captioning", library=False),
    Capability(describe, "builtins:str", "describing", needs_server=False),
    Capability(index, "marlin_agent.indexing.reports:IndexReport", "indexing", writes="index", fetches=True,
               job=True, loads=(EMBEDDER,), check=_indexing),
    Capability(finalize, "marlin_agent.scale.finalize:FinalizeReport", "finalizing", writes="index", needs_server=False,
               job=True),
    Capability(extract, "marlin_agent.extraction.job:ExtractSummary", "extracting", writes="files", fetches=True,
               job=True, check=_extraction),
    Capability(list_videos, "marlin_agent.tools.results:VideoList", "listing", needs_server=False),
)
BY_NAME = {capability.name: capability for capability in CAPABILITIES}
