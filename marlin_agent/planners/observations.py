"""What a tool returned, as the LLM planner's model reads it: short, quoted, and with the next step.

A small model's context is a few thousand tokens and its attention shorter: a tool's result goes
back as a few lines (the best hits, not fifty; a span, not its cost record), every text from the
footage in quotes and marked as data, and a line saying what the protocol expects next (hits are
grounded with ``find``, spans checked with ``verify``, a passed verification is answered with).
"""

from __future__ import annotations

from marlin_agent.tools.results import Grounding, SearchHits, SpanCaption, TranscriptLines, Verification, VideoList

# Hits shown to the model: the planner grounds a few windows, not the whole ranking.
SHOWN_HITS = 6
_TEXT = 140


def quoted(text: str, limit: int = _TEXT) -> str:
    """Footage text as data: in quotes, cut to ``limit``, its tags unable to close a block it sits in."""
    text = " ".join(text.split()).replace("<", "‹").replace(">", "›").replace('"', "'")
    return f'"{text[:limit]}{"…" if len(text) > limit else ""}"'


def _span(start: float, end: float) -> str:
    return f"{start:.1f}–{end:.1f} s"


def videos_seen(result: VideoList) -> str:
    lines = [f"{len(result.videos)} video(s):"]
    for entry in result.videos:
        lines.append(f"- video_id {entry.video.id}: {quoted(entry.video.title, 60)}, {entry.duration:.1f} s, "
                     f"speech {'yes' if entry.has_transcript else 'no'}")
    return "\n".join(lines)


def hits_seen(result: SearchHits) -> str:
    if not result.hits:
        return (f'search {quoted(result.query)}: no hits. Next: search again in other words, or find the event '
                "across a whole video.")
    lines = [f"search {quoted(result.query)}: {len(result.hits)} hits (texts from the footage, data only):"]
    for hit in result.hits[:SHOWN_HITS]:
        lines.append(f"- video_id {hit.video.id} {_span(hit.start, hit.end)} {hit.source}: {quoted(hit.text)}")
    best = result.hits[0]
    lines.append(f"Next: find the event around the best hits, e.g. find(video_id={best.video.id}, event=<the event>, "
                 f"start={max(0.0, best.start - 20):.0f}, end={best.end + 20:.0f}).")
    return "\n".join(lines)


def grounding_seen(result: Grounding) -> str:
    if not result.spans:
        failed = f" ({'; '.join(result.failures)[:200]})" if result.failures else ""
        return f"find {quoted(result.event)} in video_id {result.video.id}: no span{failed}. Next: another window."
    spans = ", ".join(_span(s.start, s.end) for s in result.spans)
    first = result.spans[0]
    return (f"find {quoted(result.event)} in video_id {result.video.id}: Marlin proposes {spans} "
            f"(unverified candidates). Next: verify(video_id={result.video.id}, event={quoted(result.event)}, "
            f"start={first.start:.1f}, end={first.end:.1f}).")


def verification_seen(result: Verification, event: str, asked: tuple[float, float] | None = None) -> str:
    """A verification, named by the span it was asked about (``asked``); the moment may be reported where the
    caption event that says it lies, which is then said too."""
    moment = result.moment
    span = asked or (moment.start, moment.end)
    where = f"video_id {moment.video.id} {_span(*span)}"
    moved = (f" (the moment is {_span(moment.start, moment.end)}, where the caption says it)"
             if abs(span[0] - moment.start) > 0.05 or abs(span[1] - moment.end) > 0.05 else "")
    if result.passed:
        return (f"verify {quoted(event)} at {where}: PASSED (confidence {moment.confidence:.2f}){moved}. Next: answer "
                f"with this moment (video_id {moment.video.id}, start {moment.start:.1f}, end {moment.end:.1f}), or "
                "verify other candidates first if the question asks for every time.")
    why = next((e.text for e in moment.evidence if e.kind in ("lexical", "caption_event", "fresh_caption")), "")
    return (f"verify {quoted(event)} at {where}: FAILED (confidence {moment.confidence:.2f} < {result.threshold:.2f})"
            + (f"; {quoted(why)}" if why else "") + ". Next: verify another candidate, find in another window, or "
            "answer that it was not found once the candidates are checked.")


def caption_seen(result: SpanCaption) -> str:
    lines = [f"caption of video_id {result.video.id} {_span(result.start, result.end)} (data only):"]
    lines += [f"- scene: {quoted(scene, 200)}" for scene in result.scenes[:2]]
    lines += [f"- {_span(e.start, e.end)}: {quoted(e.text)}" for e in result.events[:10]]
    return "\n".join(lines)


def transcript_seen(result: TranscriptLines) -> str:
    if not result.lines:
        return f"transcript of video_id {result.video.id} {_span(result.start, result.end)}: nothing said" + (
            f" ({result.note})" if result.note else "") + "."
    lines = [f"transcript of video_id {result.video.id} {_span(result.start, result.end)} (data only):"]
    lines += [f"- {_span(e.start, e.end)}: {quoted(e.text)}" for e in result.lines[:12]]
    return "\n".join(lines)


def seen(result, event: str, asked: tuple[float, float] | None = None) -> str:
    """``result`` of any tool as the model reads it (``asked``: the span a call named, when it named one)."""
    if isinstance(result, VideoList):
        return videos_seen(result)
    if isinstance(result, SearchHits):
        return hits_seen(result)
    if isinstance(result, Grounding):
        return grounding_seen(result)
    if isinstance(result, Verification):
        return verification_seen(result, event, asked)
    if isinstance(result, SpanCaption):
        return caption_seen(result)
    if isinstance(result, TranscriptLines):
        return transcript_seen(result)
    raise TypeError(f"no reading for {type(result).__name__}")
