"""Entry points that index, plan and finish an answer: ``ask`` and ``find --verify``.

Each indexes what is new among its inputs, opens a Marlin client for exactly as long as
the planner needs it, runs the planner the settings choose (the pipeline, or the LLM
planner when ``[planner] model`` names one), then cuts clips and draws a contact sheet
on request.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path

from marlin_agent.config import Settings
from marlin_agent.domain import Answer, Moment, Usage
from marlin_agent.errors import EmptyQuery, InputError, MarlinAgentError, OutputNotOurs
from marlin_agent.indexing.reports import IndexProgress
from marlin_agent.indexing.run import index_inputs
from marlin_agent.library.access import open_library
from marlin_agent.marlin.client import MarlinClient
from marlin_agent.marlin.prompts import checked_event
from marlin_agent.planners.pipeline import PipelinePlanner
from marlin_agent.private_files import as_users
from marlin_agent.tools import Toolbox
from marlin_agent.tools.run_context import RunContext
from marlin_agent.verification.calibration_set import ensure_fitted
from marlin_agent.verification.entailment import entailment_model
from marlin_agent.verification.wordnet import open_wordnet


def _fit_progress(on_progress):
    """The fit's progress shown as the indexing display shows a video's: one bar, labelled for what it is."""
    if on_progress is None:
        return None

    return lambda done, total: on_progress(IndexProgress(video="fitting verification to its model", video_done=done,
                                                         video_total=total, overall_done=0, overall_total=0))


@asynccontextmanager
async def _session(inputs: list[str], settings: Settings, on_progress=None):
    """Index what is new among ``inputs``; yield the library, a Marlin client (or None) and the index report.

    The verification model is made ready first: without it no answer can be trusted, and a
    missing one should fail in seconds, not after indexing a folder."""
    await asyncio.to_thread(entailment_model, settings)
    await asyncio.to_thread(open_wordnet, settings.verify.wordnet, settings.cache_dir)

    library = await asyncio.to_thread(open_library, settings)
    # An entailment model with priors only is fitted here, once, before its first answer.
    await asyncio.to_thread(ensure_fitted, settings, lambda: library.embedder, _fit_progress(on_progress))
    report = await index_inputs(inputs, settings, library, on_progress)
    client = MarlinClient(settings.server) if settings.server.base_url else None
    try:
        yield library, client, report
    finally:
        if client is not None:
            await client.close()


def make_planner(settings: Settings, library, client: MarlinClient | None, planner_model=None):
    """The LLM planner when a model is given or configured, else the pipeline planner; with its toolbox. A
    question asked of it runs in a ``RunContext`` of its own (``planner.run_for(video_ids)``).

    For the LLM planner the judge is built first, so the toolbox's verifier is complete from the start, and
    the pipeline planner over the same toolbox is its fallback (a run it cannot finish, or a "nothing
    found", is answered or checked by the pipeline, in the same run)."""
    if planner_model is None and not settings.planner.enabled:
        tools = Toolbox(settings, library, client)
        return PipelinePlanner(settings, tools), tools
    from pydantic_ai import RunUsage

    from marlin_agent.llm.models import as_llm, planner_llm
    from marlin_agent.planners.llm import LLMPlanner, PlannerJudge

    llm = as_llm(planner_model) if planner_model is not None else planner_llm(settings.planner, settings.home)
    usage = RunUsage()
    tools = Toolbox(settings, library, client,
                    judge=PlannerJudge(llm, usage, settings.planner.max_tokens, settings.planner.request_timeout))
    pipeline = PipelinePlanner(settings, tools)
    planner = LLMPlanner(settings, tools, llm, usage,
                         fallback=lambda run, question: pipeline.answer(run, question, run.scope))
    return planner, tools


def with_calibration(answer: Answer, tools: Toolbox) -> Answer:
    """The answer saying whose weights made its confidences; an uncalibrated run says so in its words too."""
    calibration = tools.verifier.calibration
    text = answer.answer
    if not calibration.calibrated:
        text += f" (Confidences are {calibration.describe()}.)"
    return answer.model_copy(update={"calibration": calibration.describe(), "answer": text})


def with_failed_calls(answer: Answer, run: RunContext) -> Answer:
    """An answer that rests on failed Marlin calls says so: "not found" while the server was failing is
    not an honest "not found"."""
    failed = run.failed_calls
    if not failed or answer.incomplete is not None:
        return answer
    why = (f"{len(failed)} Marlin call{'s' if len(failed) > 1 else ''} failed ({failed[0]}); moments in that "
           "footage may be missing")
    return answer.model_copy(update={"incomplete": why, "answer": f"{answer.answer} (Incomplete: {why}.)"})


def _with_index_usage(answer: Answer, report, client: MarlinClient | None, **usage) -> Answer:
    """The answer with everything Marlin spent counted in its usage: the indexing run's calls and
    tokens, and the tokens of the calls made while answering (the toolbox counts those calls)."""
    answering = client.usage if client is not None else Usage()
    # The client counts requests as the server saw them (retries included); the toolbox, which
    # budgets calls, counts each call once.
    spent = {"marlin_calls": max(answer.usage.marlin_calls, answering.marlin_calls) + report.marlin_calls,
             "marlin_prompt_tokens": report.marlin_prompt_tokens + answering.marlin_prompt_tokens,
             "marlin_completion_tokens": report.marlin_completion_tokens + answering.marlin_completion_tokens}
    return answer.model_copy(update={"usage": answer.usage.model_copy(update={**spent, **usage})})


async def cut_clips(tools: Toolbox, run: RunContext, answer: Answer, folder: Path) -> Answer:
    """The answer with each moment's ``clip`` set to the absolute path of its cut (the user's files)."""
    moments, made = [], not folder.exists()
    for moment in answer.moments:
        clip = await tools.clip(run, moment.video.id, moment.start, moment.end, folder)
        moments.append(moment.model_copy(update={"clip": str(as_users(Path(clip.path)))}))
    if made:
        as_users(folder)
    return answer.model_copy(update={"moments": moments, "trace": run.trace})


async def draw_sheet(tools: Toolbox, run: RunContext, answer: Answer, target: Path) -> Path:
    """A contact sheet of the moments, or of the rejected candidates when nothing was found."""
    from marlin_agent.media.sheet import write_sheet

    shown = answer.moments or answer.rejected
    rows = [(moment, await tools.video_info(run, moment.video.id)) for moment in shown]
    return await asyncio.to_thread(write_sheet, rows, target)


async def _write_page(tools: Toolbox, run: RunContext, answer: Answer, page: Path, sheet: Path | None) -> None:
    """The answer's HTML page, with the contact sheet drawn for it (when Pillow is installed) unless
    ``--sheet`` already drew one."""
    with tempfile.TemporaryDirectory(prefix="marlin-page-") as scratch:
        if sheet is None and (answer.moments or answer.rejected):
            try:
                sheet = await draw_sheet(tools, run, answer, Path(scratch) / "sheet.png")
            except MarlinAgentError:  # no Pillow, or frames that will not decode: the page goes without
                sheet = None
        from marlin_agent.app.report_page import write_report  # only for a page: it imports the page's renderer

        await write_report(tools, run, answer, page, sheet)


@asynccontextmanager
async def find_verify_session(inputs: list[str], settings: Settings, on_progress=None):
    """Index ``inputs`` once, then yield ``(report, verify)`` where ``verify(event, video_id)``
    runs ``find --verify`` on one of them: for evals that ask thousands of questions."""
    async with _session(inputs, settings, on_progress) as (library, client, report):
        async def verify(event: str, video_id: str) -> Answer:
            checked_event(event)
            planner = PipelinePlanner(settings, Toolbox(settings, library, client))
            return await planner.verify_in_video(planner.run_for([video_id]), event, video_id, None, None)

        yield report, verify


@asynccontextmanager
async def answerer(inputs: list[str], settings: Settings, on_progress=None):
    """Index ``inputs`` once, then yield ``(report, ask)`` where ``ask(question, video_id)`` answers
    as ``ask`` does (the pipeline planner) over that one video: for the presence evals. It returns the
    answer and every moment checked for it, before the answer dropped the ones overlapping a more
    confident moment: which of two overlapping moments is the more confident depends on the weights in
    force, and a fit of new weights must see both. With a planner model configured, it judges each span
    (the judge's evidence is then in every candidate)."""
    judge_llm = None
    if settings.planner.enabled:  # a calibration run fits the judge's weight too
        from pydantic_ai import RunUsage

        from marlin_agent.llm.models import planner_llm
        from marlin_agent.planners.llm import PlannerJudge

        judge_llm = planner_llm(settings.planner, settings.home)
    async with _session(inputs, settings, on_progress) as (library, client, report):
        async def ask_one(question: str, video_id: str) -> tuple[Answer, list[Moment]]:
            judge = (PlannerJudge(judge_llm, RunUsage(), settings.planner.max_tokens,  # a budget per question
                                  settings.planner.request_timeout) if judge_llm is not None else None)
            planner = PipelinePlanner(settings, Toolbox(settings, library, client, judge=judge))
            run = planner.run_for([video_id])
            answer = await planner.answer(run, question, [video_id])
            # Every candidate was checked in the run; a moment an answer joined from two of them is its own.
            checked = run.verified + [m for m in answer.moments + answer.rejected
                                      if not any(m is v for v in run.verified)]
            return answer, checked

        yield report, ask_one


async def verify_find(event: str, video: Path, settings: Settings, start: float | None = None,
                      end: float | None = None, on_progress=None) -> Answer:
    """Index one video if needed, then ground ``event`` in each of its chunks and verify every span."""
    checked_event(event)  # refuse an unusable event before any work
    async with _session([str(video)], settings, on_progress) as (library, client, report):
        tools = Toolbox(settings, library, client)
        planner = PipelinePlanner(settings, tools)
        run = planner.run_for([report.videos[0].id])
        verified = await planner.verify_in_video(run, event, report.videos[0].id, start, end)
        answer = with_failed_calls(with_calibration(verified, tools), run)
    return _with_index_usage(answer, report, client)


def _claim(target: Path, ours, overwrite: bool, what: str) -> None:
    """Writing ``target`` destroys nothing of the user's: it is new, or ``what`` this tool wrote, or ``overwrite``."""
    if target.is_dir():
        raise InputError(f"{target} is a folder; give a file name for {what}")
    if target.exists() and not overwrite and not ours(target):
        raise OutputNotOurs(f"{target} already exists and is not {what} this tool wrote; nothing was written to it",
                            hint="Give a new file name, or pass --force (over MCP: overwrite=true) to replace it.")


async def ask(question: str, inputs: list[str], settings: Settings, on_progress=None,
              clips_dir: Path | None = None, sheet: Path | None = None, planner_model=None,
              page: Path | None = None, overwrite: bool = False) -> Answer:
    """Index what is not indexed yet among ``inputs``, then answer ``question`` over them.

    With ``clips_dir``, cut each moment found into a file there; with ``sheet``, draw a
    contact sheet; with ``page``, write the answer as a self-contained HTML page there. A file
    already at either that this tool did not write is refused before any work, unless ``overwrite``.
    ``planner_model`` (a pydantic-ai model) overrides the configured planner.
    """
    t = time.monotonic()
    if not question.strip():  # before any model is loaded or footage touched
        raise EmptyQuery("the question is empty", hint="Ask about an event, e.g. \"when does the goal happen\".")
    if sheet is not None:
        from marlin_agent.media.sheet import is_sheet, require_pillow

        require_pillow()  # before any work: a missing extra must not cost the answer
        _claim(sheet, is_sheet, overwrite, "a contact sheet")
    if page is not None:
        from marlin_agent.app.report_page import is_page

        _claim(page, is_page, overwrite, "an answer page")
    if planner_model is None and settings.planner.enabled:
        from marlin_agent.llm.models import planner_model as build_model

        build_model(settings.planner)  # a misconfigured planner fails before any indexing
    async with _session(inputs, settings, on_progress) as (library, client, report):
        video_ids = [v.id for v in report.videos]
        planner, tools = make_planner(settings, library, client, planner_model)
        run = planner.run_for(video_ids)
        run.note("index", f"{len(report.videos)} videos ready ({report.videos_new} new, "
                   f"{report.videos_unchanged} unchanged); {len(report.failed)} skipped",
                   calls=report.marlin_calls, started=t)
        answer = with_failed_calls(with_calibration(await planner.answer(run, question, video_ids), tools), run)
        if clips_dir is not None and answer.moments:
            answer = await cut_clips(tools, run, answer, clips_dir)
        if sheet is not None and (answer.moments or answer.rejected):
            await draw_sheet(tools, run, answer, sheet)
        # The time is taken before the page is written, so the page and the command say the same.
        answer = _with_index_usage(answer, report, client, seconds=round(time.monotonic() - t, 3))
        if page is not None:
            await _write_page(tools, run, answer, page, sheet)
    return answer
