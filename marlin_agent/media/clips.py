"""Cut a moment out of a video into a file a person can open: picture, sound and orientation kept."""

from __future__ import annotations

import os
import re
import uuid
from fractions import Fraction
from pathlib import Path

from marlin_agent.domain import VideoInfo
from marlin_agent.errors import VideoUnreadable
from marlin_agent.media.seeking import frames_from, stream_start

# PyAV is imported where a clip is cut (see media.probe).
# Context either side of a moment, so the clip starts before the action does.
DEFAULT_PAD = 1.0
_MAX_HEIGHT = 1080


def _name(video: VideoInfo, start: float, end: float) -> str:
    stem = re.sub(r"[^\w.-]+", "_", video.path.stem)[:60] or "clip"
    return f"{stem}_{start:07.2f}-{end:07.2f}.mp4".replace(":", "")


def _size(width: int, height: int) -> tuple[int, int]:
    """Stored frame size for the clip: the source's, capped at 1080 lines, even sides."""
    scale = min(1.0, _MAX_HEIGHT / min(width, height))
    return max(2, int(width * scale) // 2 * 2), max(2, int(height * scale) // 2 * 2)


def cut_clip(video: VideoInfo, start: float, end: float, folder: Path, pad: float = DEFAULT_PAD) -> Path:
    """Write ``[start - pad, end + pad]`` of ``video`` to ``folder`` as H.264 (+ AAC when it has sound)."""
    import av
    lo, hi = max(0.0, start - pad), min(video.duration, end + pad)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / _name(video, lo, hi)
    partial = folder / f".{uuid.uuid4().hex[:12]}.partial.mp4"
    try:
        with av.open(str(video.path), metadata_errors="ignore") as source, \
                av.open(str(partial), "w", format="mp4", options={"movflags": "+faststart"}) as sink:
            # Every output stream must exist before the first packet is written.
            picture = _picture_stream(sink, video)
            sound = _sound_stream(sink, source.streams.audio[0]) if source.streams.audio else None
            _copy_picture(source, sink, picture, video, lo, hi)
            if sound is not None:
                _copy_sound(source, sink, sound, lo, hi)
        os.replace(partial, target)
    except av.FFmpegError as exc:
        raise VideoUnreadable(f"could not cut {lo:.1f}–{hi:.1f} s from {video.path}: {exc}") from exc
    finally:
        partial.unlink(missing_ok=True)
    return target


def _picture_stream(sink, video: VideoInfo):
    rate = Fraction(video.fps).limit_denominator(1001) if video.fps > 0 else Fraction(30)
    stored_w, stored_h = (video.height, video.width) if video.rotation in (90, 270) else (video.width, video.height)
    out = sink.add_stream("libx264", rate=rate)
    out.width, out.height = _size(stored_w, stored_h)
    out.pix_fmt = "yuv420p"
    out.options = {"preset": "veryfast", "crf": "20"}
    if video.rotation:
        out.set_display_rotation(video.rotation)  # keep the phone's orientation as metadata
    return out


def _sound_stream(sink, stream):
    rate = stream.rate or 48000
    out = sink.add_stream("aac", rate=rate, layout="stereo" if stream.channels > 1 else "mono")
    out.codec_context.time_base = Fraction(1, rate)
    return out


def _copy_picture(source, sink, out, video: VideoInfo, lo: float, hi: float) -> None:
    stream = source.streams.video[0]
    stream.thread_type = "AUTO"
    origin = stream_start(stream)
    rate = out.codec_context.framerate or Fraction(30)
    width, height = out.width, out.height
    index = 0
    for frame in frames_from(source, stream, lo):
        t = frame.time - origin
        if t < lo - 1e-6:
            continue
        if t >= hi:
            break
        picture = frame.reformat(width=width, height=height, format="yuv420p")
        picture.pts = round((t - lo) * rate)
        picture.time_base = 1 / rate
        if picture.pts < index:
            continue  # two source frames on one output tick (variable frame rate): keep the first
        index = picture.pts + 1
        for packet in out.encode(picture):
            sink.mux(packet)
    for packet in out.encode():
        sink.mux(packet)


def _copy_sound(source, sink, out, lo: float, hi: float) -> None:
    import av
    stream = source.streams.audio[0]
    rate = out.rate
    layout = out.layout.name
    resampler = av.AudioResampler(format="fltp", layout=layout, rate=rate)
    # AAC takes fixed 1024-sample frames; a FIFO regroups what the decoder hands out.
    fifo = av.AudioFifo()
    written = 0

    def drain(final: bool = False) -> None:
        nonlocal written
        while fifo.samples >= 1024 or (final and fifo.samples):
            frame = fifo.read(1024 if fifo.samples >= 1024 else fifo.samples)
            frame.pts, frame.time_base = written, Fraction(1, rate)
            written += frame.samples
            for packet in out.encode(frame):
                sink.mux(packet)

    source.seek(max(0, int(lo / stream.time_base)), stream=stream, backward=True)
    for frame in source.decode(stream):
        t = frame.time or 0.0
        if t >= hi:
            break
        for converted in resampler.resample(frame):
            samples = converted.to_ndarray()
            first = max(0, round((lo - t) * rate))
            last = min(samples.shape[1], max(0, round((hi - t) * rate)))
            if first >= last:
                continue
            if first or last < samples.shape[1]:
                converted = av.AudioFrame.from_ndarray(samples[:, first:last].copy(), format="fltp", layout=layout)
                converted.sample_rate = rate
            converted.pts = None
            fifo.write(converted)
            drain()
    drain(final=True)
    for packet in out.encode():
        sink.mux(packet)
