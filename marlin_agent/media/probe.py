"""Probe a video file with PyAV: duration, frame rate, size, rotation, audio, soundness."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

from marlin_agent.domain import VideoInfo
from marlin_agent.errors import VideoEmpty, VideoNotFound, VideoTruncated, VideoUnreadable
from marlin_agent.media.content_id import content_id, remembered
from marlin_agent.media.seeking import frames_from, stream_start

# PyAV (a tenth of a second to import) is imported where a file is read: an `ask` over footage already
# probed reads none.
if TYPE_CHECKING:
    import av

# A file whose last decodable frame is this far before its declared end is truncated.
_TRUNCATION_SLACK = 2.0
# Less footage than this is not a video to analyse: random bytes that a lenient demuxer reads as a
# stream yield a frame or two "lasting" milliseconds.
MIN_FOOTAGE = 0.25
# Footage this far past the declared end means the metadata lies (a bad muxer, a hand-edited file).
_OVERRUN_SLACK = 2.0


def _declared_duration(container: av.container.InputContainer, stream) -> float | None:
    import av
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / av.time_base
    return None


def _scanned_duration(container: av.container.InputContainer, stream) -> float | None:
    """Duration from the packets themselves, for containers that declare none (raw streams)."""
    last = None
    for packet in container.demux(stream):
        if packet.pts is not None and packet.duration is not None:
            end = float((packet.pts + packet.duration) * packet.time_base)
            last = end if last is None else max(last, end)
    container.seek(0)
    return last


def _stream_end(container, stream, declared: float) -> float | None:
    """Where the video stream's packets really end: demuxed (not decoded) from just before the
    declared end, so a truthful file costs a second of packets and a lying one is read to its end."""
    import av
    origin = stream_start(stream)
    last = None
    try:
        container.seek(int((origin + max(0.0, declared - 1.0)) / stream.time_base), stream=stream, backward=True)
        for packet in container.demux(stream):
            if packet.pts is not None:
                end = float((packet.pts + (packet.duration or 0)) * packet.time_base) - origin
                last = end if last is None else max(last, end)
    except av.FFmpegError:
        return last
    return last


def _looks_like_video_container(path: Path) -> bool:
    """True when the first bytes carry a common video container's signature."""
    with path.open("rb") as handle:
        head = handle.read(189)
    return (
        head[4:8] in (b"ftyp", b"moov", b"mdat", b"free", b"wide")  # MP4 / MOV
        or head[:4] == b"\x1a\x45\xdf\xa3"  # Matroska / WebM
        or (head[:4] == b"RIFF" and head[8:12] == b"AVI ")
        or head[:1] == head[188:189] == b"\x47"  # MPEG-TS: a sync byte every 188 bytes
    )


def _open(path: Path) -> av.container.InputContainer:
    import av
    try:
        return av.open(str(path), mode="r", metadata_errors="ignore")
    except (av.FFmpegError, UnicodeDecodeError) as exc:
        if _looks_like_video_container(path):
            raise VideoTruncated(
                f"{path} looks like a video but cannot be opened ({exc.__class__.__name__}): "
                "it is damaged or truncated"
            ) from exc
        raise VideoUnreadable(f"{path} is not a video file (FFmpeg cannot read it)") from exc


def _first_frame(container, stream, path: Path) -> av.VideoFrame:
    import av
    try:
        for frame in container.decode(stream):
            return frame
    except av.FFmpegError as exc:
        raise VideoUnreadable(f"{path} could not be decoded: {exc}") from exc
    raise VideoEmpty(f"{path} has a video stream but no decodable frames")


def _check_tail(container, stream, path: Path, duration: float) -> None:
    """Decode near the declared end: a truncated copy declares footage it no longer holds."""
    import av
    origin = stream_start(stream)
    last_time = None
    try:
        for frame in frames_from(container, stream, max(0.0, duration - 1.0)):
            last_time = frame.time - origin
    except av.FFmpegError as exc:
        raise VideoTruncated(f"{path} is damaged near its end ({exc}); it is probably truncated") from exc
    if last_time is None or last_time < duration - _TRUNCATION_SLACK:
        reached = "no frames" if last_time is None else f"footage up to {last_time:.1f} s"
        raise VideoTruncated(f"{path} declares {duration:.1f} s but holds {reached}; it is probably truncated")


def probe_video(path: Path, cache_dir: Path | None = None) -> VideoInfo:
    """Open ``path``, check that it is a sound video, and describe it.

    Raises a specific error for a missing file, an empty file, something that is not a
    video, and a truncated or corrupt video.
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise VideoNotFound(f"no such file: {path}")
    if path.is_dir():
        raise VideoNotFound(f"{path} is a folder, not a video file")
    if cache_dir is None:
        return _probe(path, None)
    # An unchanged file is not opened again: checking a folder before each `ask` stays cheap.
    known = remembered(path, cache_dir, "probes", lambda: _probe(path, cache_dir).model_dump_json())
    return VideoInfo.model_validate_json(known).model_copy(update={"path": path.resolve()})


def _probe(path: Path, cache_dir: Path | None) -> VideoInfo:
    size = path.stat().st_size
    if size == 0:
        raise VideoEmpty(f"{path} is empty (0 bytes)")
    with _open(path) as container:
        if not container.streams.video and not container.streams.audio:
            raise VideoEmpty(f"{path} is a media container with no footage in it (zero frames)")
        if not container.streams.video:
            raise VideoUnreadable(f"{path} has no video stream (is it an audio or image file?)")
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        duration = _declared_duration(container, stream) or _scanned_duration(container, stream)
        first = _first_frame(container, stream, path)
        if not duration or duration <= 0:
            raise VideoEmpty(f"{path} has a duration of zero")
        if duration < MIN_FOOTAGE:
            raise VideoEmpty(f"{path} holds {duration:.3f} s of footage: too little to be a video (is it one?)")
        _check_tail(container, stream, path, duration)
        declared = None
        actual = _stream_end(container, stream, duration)
        if actual is not None and actual > duration + max(_OVERRUN_SLACK, 0.02 * duration):
            declared, duration = duration, actual  # the streams are the truth: index all of the footage
        rate = stream.average_rate or stream.guessed_rate or Fraction(0)
        rotation = int(first.rotation or 0) % 360
        width, height = first.width, first.height
        if rotation in (90, 270):
            width, height = height, width
        return VideoInfo(
            path=path.resolve(),
            content_id=content_id(path, cache_dir),
            size_bytes=size,
            duration=round(duration, 6),
            fps=round(float(rate), 6),
            width=width,
            height=height,
            rotation=rotation,
            has_audio=bool(container.streams.audio),
            codec=stream.codec_context.name,
            declared_duration=None if declared is None else round(declared, 6),
        )
