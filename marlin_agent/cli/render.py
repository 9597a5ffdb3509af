"""Human-readable output for the terminal (JSON output is the models' own dumps)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from marlin_agent.clock import clock
from marlin_agent.domain import ChunkFailure, FindResult, VideoCaption, VideoInfo


def _video_line(video: VideoInfo) -> str:
    audio = "audio" if video.has_audio else "no audio"
    return (f"[bold]{video.path.name}[/]  {clock(video.duration)}  {video.width}×{video.height}  "
            f"{video.fps:g} fps  {audio}")


def _failures(console: Console, failures: list[ChunkFailure]) -> None:
    for failure in failures:
        console.print(f"[yellow]chunk {clock(failure.start)}–{clock(failure.end)} failed[/] ({failure.code}): "
                      f"{failure.message}")


def show_caption(console: Console, result: VideoCaption) -> None:
    console.print(_video_line(result.video))
    for chunk in result.chunks:
        console.print(f"\n[cyan]{clock(chunk.start)}–{clock(chunk.end)}[/] {chunk.scene}")
        for event in chunk.events:
            console.print(f"  [green]{clock(event.start)}–{clock(event.end)}[/]  {event.text}")
        if not chunk.format_ok:
            console.print("  [dim](Marlin's answer did not keep the caption format; parsed leniently)[/]")
    _failures(console, result.failures)


def show_find(console: Console, result: FindResult) -> None:
    console.print(_video_line(result.video))
    table = Table(title=f'Candidates for "{result.query}" (unverified: Marlin always proposes a span)')
    table.add_column("#", justify="right")
    table.add_column("start")
    table.add_column("end")
    table.add_column("chunk searched")
    for rank, candidate in enumerate(result.candidates, 1):
        table.add_row(str(rank), clock(candidate.start), clock(candidate.end),
                      f"{clock(candidate.chunk_start)}–{clock(candidate.chunk_end)}")
    console.print(table)
    _failures(console, result.failures)


def show_index_report(console: Console, report) -> None:
    if report.repair is not None:
        mended = report.repair.rebuilt + report.repair.restored
        console.print("Repair: " + ("; ".join(mended) if mended else "nothing was damaged")
                      + (f"; {report.repair.forgotten_chunks} chunks to caption again" if report.repair.forgotten_chunks
                         else ""))
        for problem in report.repair.problems_left:
            console.print(f"[red]still damaged[/] {problem}")
    table = Table(title="Indexed")
    for column in ("video", "status", "chunks", "failed", "transcript"):
        table.add_column(column)
    for video in report.videos:
        table.add_row(video.title or video.path, video.status, f"{video.chunks_done}/{video.chunks_planned}",
                      str(video.chunks_failed), video.transcript)
    console.print(table)
    console.print(
        f"{report.videos_new} new, {report.videos_updated} updated, {report.videos_unchanged} unchanged, "
        f"{report.videos_partial} partial, {report.videos_failed} failed · {report.chunks_captioned} chunks captioned, "
        f"{report.chunks_failed} failed · {report.minutes_of_footage:.1f} min of footage · "
        f"{report.marlin_calls} Marlin calls · {report.seconds:.1f} s"
    )
    for skipped in report.failed:
        console.print(f"[yellow]skipped[/] {skipped.source} ({skipped.code}): {skipped.reason}")
    for video in report.videos:
        if video.note:
            console.print(f"[yellow]note[/] {video.title or video.path}: {video.note}", highlight=False)
    for video in report.videos:
        for failure in video.failures:
            console.print(f"[yellow]failed[/] {video.title or video.path} {clock(failure.start)}–{clock(failure.end)} "
                          f"({failure.code}): {failure.message}", highlight=False)
    if report.chunks_failed:
        console.print("[dim]Failed chunks are kept and retried on the next `marlin-agent index` run.[/]")


def show_finalize_report(console: Console, report) -> None:
    console.print(f"{report.videos} videos · {report.chunks_done} chunks captioned · {report.segments} segments · "
                  f"vector index: {'yes' if report.vector_index else 'not needed yet'} · {report.seconds:.1f} s")
    if report.shards_missing or report.shards_unfinished:
        console.print(f"[yellow]Of {report.shards} shards, never started: {report.shards_missing or 'none'}; "
                      f"not finished: {report.shards_unfinished or 'none'}.[/]", highlight=False)
    elif not report.unfinished:
        console.print("Every chunk of every video is in the index.")
        return
    console.print(f"[yellow]{report.chunks_missing} chunks missing[/] in {len(report.unfinished)} videos "
                  f"({report.chunks_failed} failed):", highlight=False)
    for video in report.unfinished:
        console.print(f"  {video.path}: {video.chunks_done}/{video.chunks_planned}", highlight=False)
    console.print("[dim]Run the shards (or a plain `marlin-agent index`) again: "
                  "only the missing chunks are asked for.[/]")


def show_search(console: Console, result) -> None:
    if not result.results:
        console.print(f'Nothing indexed matches "{result.query}". '
                      "Index footage first with `marlin-agent index PATH|URL`, or pass --in PATH.")
        return
    table = Table(title=f'"{result.query}"')
    for column in ("#", "video", "start", "end", "source", "text", "score"):
        table.add_column(column)
    for rank, hit in enumerate(result.results, 1):
        table.add_row(str(rank), hit.video.title or hit.video.path, clock(hit.start), clock(hit.end), hit.source,
                      hit.text if len(hit.text) < 90 else hit.text[:87] + "…", f"{hit.score:.4f}")
    console.print(table)


def show_answer(console: Console, answer) -> None:
    style = "bold green" if answer.found else "bold yellow"
    console.print(f"[{style}]{answer.answer}[/]")
    if answer.moments:
        table = Table()
        for column in ("#", "video", "start", "end", "confidence", "evidence"):
            table.add_column(column)
        for rank, moment in enumerate(answer.moments, 1):
            evidence = "; ".join(f"{e.kind} {e.score:.2f}" for e in moment.evidence if e.kind != "grounding")
            table.add_row(str(rank), moment.video.title or moment.video.path, clock(moment.start), clock(moment.end),
                          f"{moment.confidence:.2f}", evidence)
        console.print(table)
        for moment in answer.moments:
            if moment.clip:
                console.print(f"clip: {moment.clip}")
    if answer.incomplete:
        console.print(f"[yellow]stopped early: {answer.incomplete}[/]")
    tokens = f" · {answer.usage.planner_tokens} planner tokens" if answer.usage.planner_tokens else ""
    console.print(f"[dim]{answer.usage.marlin_calls} Marlin calls{tokens} · {answer.usage.seconds:.1f} s[/]")


def show_extract(console: Console, summary) -> None:
    style = "bold green" if not summary.rows_failed else "bold yellow"
    console.print(f"[{style}]{summary.rows_ok} rows ok, {summary.rows_failed} failed validation, "
                  f"{summary.rows_skipped} already done[/] → {summary.output}")
    console.print(f"[dim]{summary.tokens} LLM tokens · {summary.marlin_calls} Marlin calls · "
                  f"{summary.seconds:.1f} s[/]")
    if summary.rows_failed:
        console.print("[dim]Failed rows are in the file with their error; --retry-failed fills them again.[/]")


def show_videos(console: Console, listed) -> None:
    if not listed.videos:
        console.print("Nothing is indexed yet: `marlin-agent index PATH|URL` adds footage.")
        return
    table = Table()
    for column in ("video", "duration", "chunks indexed", "speech"):
        table.add_column(column)
    for entry in listed.videos:
        speech = "transcribed" if entry.has_transcript else "yes" if entry.has_audio else "no audio"
        table.add_row(entry.video.title or entry.video.path, clock(entry.duration), str(entry.chunks_indexed), speech)
    console.print(table)
