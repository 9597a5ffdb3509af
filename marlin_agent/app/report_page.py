"""An answer as one self-contained HTML page: open it, watch each moment, read why it counts.

Everything is inside the file: each moment's clip (cut with a little context, as `--clips`
does) as an inline MP4 that opens at the moment itself, its confidence and evidence, the
contact sheet when there is one, and the rejected candidates folded away with why they
failed. A clip too large to inline is replaced by the source video, opened at the
moment through a media fragment (``#t=start,end``).

Above them, a timeline per video: the whole video as a bar, with the moments found, the
candidates rejected and the lines spoken placed where they happen; clicking one plays the
source video from there in the player under the bar.
"""

from __future__ import annotations

import asyncio
import base64
import html
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from marlin_agent.clock import clock
from marlin_agent.domain import Answer, Moment, VideoRef
from marlin_agent.errors import MarlinAgentError
from marlin_agent.file_names import text_path
from marlin_agent.media.clips import DEFAULT_PAD
from marlin_agent.private_files import as_users
from marlin_agent.tools import Toolbox
from marlin_agent.tools.run_context import RunContext

# Larger clips are not inlined: the page would take long to open, and the source plays as well.
INLINE_LIMIT_BYTES = 24 * 1024 * 1024
# A whole source video is inlined for its timeline only when small and in a format browsers play.
INLINE_SOURCE_BYTES = 8 * 1024 * 1024
_BROWSER_FORMATS = {".mp4": "video/mp4", ".m4v": "video/mp4", ".mov": "video/mp4", ".webm": "video/webm"}

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#1d1d1f}
h1{font-size:1.4em;margin-bottom:.2em} .verdict{font-size:1.1em;margin:.4em 0 1.2em}
.found{color:#0a7a32} .notfound{color:#a1460a}
.moment{border:1px solid #ddd;border-radius:8px;padding:1em;margin:1em 0}
video{width:100%;max-height:420px;background:#000;border-radius:4px}
table{border-collapse:collapse;width:100%;font-size:.92em}
td,th{border-top:1px solid #eee;padding:.3em .5em;text-align:left}
.meta{color:#666;font-size:.9em} details{margin:1em 0} img{max-width:100%}
.timeline{margin:1.2em 0} .track{position:relative;height:34px;background:#f1f1f3;border-radius:4px;margin:.3em 0}
.mark{position:absolute;top:4px;height:18px;min-width:3px;border-radius:3px;cursor:pointer;border:0;padding:0}
.mark.found{background:#0a7a32} .mark.rejected{background:#c9a227;opacity:.75}
.mark.speech{top:25px;height:6px;background:#5b6ee1}
.legend span{margin-right:1em}
.legend i{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.3em}
"""

# Each inline clip opens where the moment starts (after the context cut before it).
_SEEK = """
for (const v of document.querySelectorAll('video[data-from]')) {
  const from = parseFloat(v.dataset.from);
  const seek = () => { if (Math.abs(v.currentTime - from) > 0.05) v.currentTime = from; };
  if (v.readyState >= 1) seek(); else v.addEventListener('loadedmetadata', seek, {once: true});
}
"""

MARK = "marlin-agent answer page"  # in every page's head, so a file is known for one of ours before it is replaced


def is_page(path: Path) -> bool:
    """Whether ``path`` is an answer page this tool wrote."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return f'<meta name="generator" content="{MARK}">'.encode() in head


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _evidence_rows(moment: Moment) -> str:
    rows = "".join(f"<tr><td>{_e(e.kind)}</td><td>{_e(e.text)}</td><td>{clock(e.start)}–{clock(e.end)}</td>"
                   f"<td>{e.score:.2f}</td></tr>" for e in moment.evidence)
    return f"<table><tr><th>signal</th><th>what</th><th>when</th><th>support</th></tr>{rows}</table>" if rows else ""


def _file_source(video: VideoRef) -> str:
    """A video on this machine, for a page opened from the disk: its file, inline when small and playable."""
    return _source(video.path)


def _player(moment: Moment, clip: Path | None, source: Callable[[VideoRef], str] | None = None) -> str:
    if clip is not None and clip.is_file() and clip.stat().st_size <= INLINE_LIMIT_BYTES:
        data = base64.b64encode(clip.read_bytes()).decode("ascii")
        offset = min(DEFAULT_PAD, moment.start)  # the context the clip starts with
        return (f'<video controls preload="auto" muted data-from="{offset:.3f}" '
                f'src="data:video/mp4;base64,{data}"></video>')
    address = source(moment.video) if source else text_path(moment.video.path).resolve().as_uri()
    return f'<video controls preload="metadata" src="{_e(address)}#t={moment.start:.3f},{moment.end:.3f}"></video>'


def _moment_html(moment: Moment, clip: Path | None, number: int,
                 source: Callable[[VideoRef], str] | None = None) -> str:
    return (f'<section class="moment"><h2>{number}. {_e(moment.video.title)} · {clock(moment.start)}–'
            f'{clock(moment.end)}</h2><p class="meta">confidence {moment.confidence:.2f} · {_e(moment.video.path)}</p>'
            f"{_player(moment, clip, source)}{_evidence_rows(moment)}</section>")


def _rejected_html(answer: Answer) -> str:
    if not answer.rejected:
        return ""
    items = "".join(f"<li><b>{_e(m.video.title)} {clock(m.start)}–{clock(m.end)}</b> (confidence "
                    f"{m.confidence:.2f}){_evidence_rows(m)}</li>" for m in answer.rejected)
    return (f"<details><summary>{len(answer.rejected)} candidate(s) Marlin proposed that did not pass "
            f"verification</summary><ol>{items}</ol></details>")


def _sheet_html(sheet: Path | None) -> str:
    if sheet is None or not sheet.is_file():
        return ""
    data = base64.b64encode(sheet.read_bytes()).decode("ascii")
    return f'<h2>Contact sheet</h2><img alt="contact sheet" src="data:image/png;base64,{data}">'


# A click on a timeline mark plays the source video from the mark's start.
_TIMELINE = """
for (const mark of document.querySelectorAll('.mark')) {
  mark.addEventListener('click', () => {
    const player = document.getElementById(mark.dataset.player);
    const go = () => { player.currentTime = parseFloat(mark.dataset.start); player.play().catch(() => {}); };
    if (player.readyState >= 1) { go(); return; }
    player.addEventListener('loadedmetadata', go, {once: true});
    player.load();
  });
}
"""


@dataclass(frozen=True)
class VideoTimeline:
    """What a timeline needs beside the answer: the video's length, and its transcript lines."""

    duration: float
    speech: list[tuple[float, float, str]]


def _mark(kind: str, player: str, start: float, end: float, duration: float, label: str) -> str:
    left = 100 * max(0.0, min(start, duration)) / duration
    width = 100 * max(0.0, min(end, duration) - max(0.0, start)) / duration
    return (f'<button class="mark {kind}" data-player="{player}" data-start="{start:.3f}" '
            f'style="left:{left:.3f}%;width:{width:.3f}%" title="{_e(label)}" '
            f'aria-label="{_e(label)}"></button>')


def _source(path: str) -> str:
    """The whole video for a timeline's player: inline when small and browser-playable, else its file."""
    file = text_path(path)
    kind = _BROWSER_FORMATS.get(file.suffix.lower())
    try:
        small = kind is not None and file.stat().st_size <= INLINE_SOURCE_BYTES
    except OSError:
        small = False
    if small:
        return f"data:{kind};base64," + base64.b64encode(file.read_bytes()).decode("ascii")
    return file.resolve().as_uri()


def _timeline_html(answer: Answer, timelines: dict[str, VideoTimeline],
                   source: Callable[[VideoRef], str] = _file_source) -> str:
    """One bar per video the answer names (moments first, then rejected candidates)."""
    videos = {m.video.id: m.video for m in [*answer.moments, *answer.rejected]}
    parts = []
    for number, (video_id, video) in enumerate(videos.items(), 1):
        known = timelines.get(video_id)
        if known is None or known.duration <= 0:
            continue
        player = f"player-{number}"
        marks = [_mark("found", player, m.start, m.end, known.duration,
                       f"found {clock(m.start)}–{clock(m.end)}, confidence {m.confidence:.2f}")
                 for m in answer.moments if m.video.id == video_id]
        marks += [_mark("rejected", player, m.start, m.end, known.duration,
                        f"rejected {clock(m.start)}–{clock(m.end)}, confidence {m.confidence:.2f}")
                  for m in answer.rejected if m.video.id == video_id]
        marks += [_mark("speech", player, start, end, known.duration, f"{clock(start)} said: {text}")
                  for start, end, text in known.speech]
        parts.append(f'<div class="timeline"><b>{_e(video.title)}</b> <span class="meta">0:00–{clock(known.duration)}'
                     f'</span><div class="track">{"".join(marks)}</div>'
                     f'<video id="{player}" controls preload="metadata" muted src="{_e(source(video))}"></video>'
                     f'</div>')
    if not parts:
        return ""
    legend = ('<p class="legend meta"><span><i style="background:#0a7a32"></i>found</span>'
              '<span><i style="background:#c9a227"></i>rejected</span><span><i style="background:#5b6ee1"></i>'
              'spoken</span> Click a mark to play the video from there.</p>')
    return f"<h2>Where it happens</h2>{legend}{''.join(parts)}"


def answer_html(answer: Answer, clips: list[Path | None], sheet: Path | None,
                timelines: dict[str, VideoTimeline] | None = None,
                source: Callable[[VideoRef], str] | None = None) -> str:
    """The answer's part of a page: verdict, timelines, moments, sheet, rejected candidates, usage. ``source``
    gives the address a player loads a whole video from (default: the file on this machine)."""
    verdict = (f'<p class="verdict found">Found: {_e(answer.answer)}</p>' if answer.found
               else f'<p class="verdict notfound">Not found. {_e(answer.answer)}</p>')
    moments = "".join(_moment_html(m, c, n, source)
                      for n, (m, c) in enumerate(zip(answer.moments, clips, strict=True), 1))
    usage = answer.usage
    footer = (f'<p class="meta">{usage.marlin_calls} Marlin call(s) · {usage.seconds:.1f} s. '
              f"{_e(answer.incomplete) if answer.incomplete else ''}</p>")
    return (f"{verdict}{_timeline_html(answer, timelines or {}, source or _file_source)}{moments}"
            f"{_sheet_html(sheet)}{_rejected_html(answer)}{footer}")


# What the answer's part needs inside another page: its look (that page's own body layout kept), and the script
# that seeks its players.
STYLE = "\n".join(line for line in _STYLE.splitlines() if not line.startswith("body{"))
SCRIPT = _SEEK + _TIMELINE


def page_html(answer: Answer, clips: list[Path | None], sheet: Path | None,
              timelines: dict[str, VideoTimeline] | None = None) -> str:
    """The page for ``answer``, with ``clips[i]`` the cut of ``answer.moments[i]`` (None: link the source)
    and a timeline for each video in ``timelines`` (by video id)."""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="generator" content="{MARK}">'
            f'<title>{_e(answer.question)}</title>'
            f"<style>{_STYLE}</style></head><body><h1>{_e(answer.question)}</h1>"
            f"{answer_html(answer, clips, sheet, timelines)}<script>{SCRIPT}</script></body></html>")


async def timelines_of(tools: Toolbox, run: RunContext, answer: Answer) -> dict[str, VideoTimeline]:
    """The length and spoken lines of each video the answer names (a video gone since is left out)."""
    found = {}
    for video_id in dict.fromkeys(m.video.id for m in [*answer.moments, *answer.rejected]):
        try:
            info = await tools.video_info(run, video_id)
            lines = await asyncio.to_thread(tools.library.segments, video_id, "transcript")
        except MarlinAgentError:
            continue  # a video gone since: the page goes without its timeline
        found[video_id] = VideoTimeline(info.duration, [(r.start, r.end, r.text) for r in lines])
    return found


async def write_report(tools: Toolbox, run: RunContext, answer: Answer, target: Path,
                       sheet: Path | None = None) -> Path:
    """Write the page for ``answer`` to ``target``, with the contact sheet ``sheet`` if there is one;
    clips are cut now unless ``--clips`` already made them."""
    with tempfile.TemporaryDirectory(prefix="marlin-page-") as scratch:
        clips: list[Path | None] = []
        for moment in answer.moments:
            if moment.clip:
                clips.append(Path(moment.clip))
            else:
                made = await tools.clip(run, moment.video.id, moment.start, moment.end, Path(scratch))
                clips.append(Path(made.path))
        page = page_html(answer, clips, sheet, await timelines_of(tools, run, answer))
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        await asyncio.to_thread(partial.write_text, page, "utf-8")
        partial.replace(target)
    return as_users(target)
