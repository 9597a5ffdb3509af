"""Human-readable output for the terminal (JSON output is the models' own dumps)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from marlin_agent.domain import ChunkFailure, FindResult, VideoCaption, VideoInfo


def clock(seconds: float) -> str:
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(int(minutes), 60)
    return f"{hours}:{minutes:02d}:{secs:04.1f}" if hours else f"{minutes}:{secs:04.1f}"


def _video_line(video: VideoInfo) -> str:
    audio = "audio" if video.has_audio else "no audio"
    return f"[bold]{video.path.name}[/]  {clock(video.duration)}  {video.width}×{video.height}  {video.fps:g} fps  {audio}"


def _failures(console: Console, failures: list[ChunkFailure]) -> None:
    for failure in failures:
        console.print(f"[yellow]chunk {clock(failure.start)}–{clock(failure.end)} failed[/] ({failure.code}): {failure.message}")


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
