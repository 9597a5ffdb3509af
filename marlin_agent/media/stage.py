"""Stage a chunk as a small, server-ready clip in a content-addressed cache.

The clip is re-encoded (never stream-copied: a copy snaps to keyframes and skews every
timestamp after the cut), starts exactly at the chunk's start, has no audio, a modest
frame rate, upright frames, and a size within Marlin's per-frame pixel budget. Frames
are streamed from the decoder; the whole video is never held in memory.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import uuid
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from marlin_agent.domain import Chunk, StagedClip, VideoInfo
from marlin_agent.errors import VideoUnreadable
from marlin_agent.media.clip_cache import touch
from marlin_agent.media.disk_space import disk_full, is_disk_full
from marlin_agent.media.seeking import frames_from, stream_start

# PyAV is imported where a clip is made: a window staged before needs none (see media.probe).
if TYPE_CHECKING:
    import av

# Bump when the staged bytes would change for the same inputs.
STAGE_VERSION = 1
# Qwen-family processors resize frames to multiples of 28 px; staging at such a size
# means the server does not resample again.
_PATCH = 28
_MIN_FRAMES = 4


def staged_size(width: int, height: int, max_pixels: int) -> tuple[int, int]:
    """The largest size with the same aspect, sides multiples of 28, within ``max_pixels``."""
    scale = min(1.0, math.sqrt(max_pixels / (width * height)))
    w = max(_PATCH, math.floor(width * scale / _PATCH) * _PATCH)
    h = max(_PATCH, math.floor(height * scale / _PATCH) * _PATCH)
    return w, h


def _clip_key(video: VideoInfo, chunk: Chunk, fps: float, max_pixels: int) -> str:
    source = f"{video.content_id}|{chunk.start:.6f}|{chunk.end:.6f}|{fps}|{max_pixels}|v{STAGE_VERSION}"
    return hashlib.blake2b(source.encode(), digest_size=12).hexdigest()


def _rate(fps: float) -> Fraction:
    return Fraction(fps).limit_denominator(1001)


def _sampled_frames(container, stream, chunk: Chunk, fps: float):
    """Yield (tick, frame): for each output tick, the last source frame shown at or before it."""
    origin = stream_start(stream)
    ticks = max(1, math.ceil((chunk.end - chunk.start) * fps - 1e-6))
    tick = 0
    previous = None
    for frame in frames_from(container, stream, chunk.start):
        t = frame.time - origin
        while tick < ticks and chunk.start + tick / fps < t - 1e-6:
            yield tick, previous if previous is not None else frame
            tick += 1
        if tick >= ticks:
            return
        previous = frame
    while previous is not None and tick < ticks:
        yield tick, previous
        tick += 1


def _upright(frame: av.VideoFrame, width: int, height: int, rotation: int) -> av.VideoFrame:
    # Area averaging is the right filter for shrinking and costs half of bicubic.
    import av
    if rotation == 0:
        return frame.reformat(width=width, height=height, format="yuv420p", interpolation="AREA")
    stored_w, stored_h = (height, width) if rotation in (90, 270) else (width, height)
    pixels = frame.reformat(width=stored_w, height=stored_h, format="rgb24", interpolation="AREA").to_ndarray()
    turned = np.ascontiguousarray(np.rot90(pixels, k=rotation // 90))
    return av.VideoFrame.from_ndarray(turned, format="rgb24").reformat(format="yuv420p")


def _tune_decoder(stream, video: VideoInfo, fps: float, max_pixels: int, threads: int) -> None:
    """Make decoding, the dominant cost of staging, as cheap as the output allows."""
    context = stream.codec_context
    # Frame threading pays off only when no other chunk is being staged on the other cores.
    stream.thread_type = "AUTO" if threads > 1 else "NONE"
    context.thread_count = threads
    # Non-reference frames are never needed when most source frames are dropped anyway.
    if video.fps >= 3 * fps:
        context.skip_frame = "NONREF"
    # Skipping the deblocking filter is invisible once frames are scaled down this much
    # (measured above 41 dB PSNR on 720p input) and saves about a quarter of decode time.
    if video.width * video.height >= 3 * max_pixels:
        context.options = {"skip_loop_filter": "all"}


def _encode(video: VideoInfo, chunk: Chunk, target: Path, fps: float, max_pixels: int,
            decoder_threads: int) -> tuple[int, int, int]:
    import av
    width, height = staged_size(video.width, video.height, max_pixels)
    rate = _rate(fps)
    frames = 0
    with av.open(str(video.path), metadata_errors="ignore") as source, av.open(
        str(target), mode="w", format="mp4", options={"movflags": "+faststart"}
    ) as sink:
        stream = source.streams.video[0]
        _tune_decoder(stream, video, fps, max_pixels, decoder_threads)
        out = sink.add_stream("libx264", rate=rate)
        out.width, out.height, out.pix_fmt = width, height, "yuv420p"
        out.codec_context.time_base = 1 / rate
        # Small frames at a low rate: one encoder thread is plenty, and leaves the cores to decoding.
        out.thread_count = 1
        out.options = {"preset": "superfast", "crf": "23", "g": str(max(1, round(fps * 2)))}
        for tick, frame in _sampled_frames(source, stream, chunk, fps):
            picture = _upright(frame, width, height, video.rotation)
            picture.pts = tick
            picture.time_base = out.codec_context.time_base
            for packet in out.encode(picture):
                sink.mux(packet)
            frames += 1
        for packet in out.encode():
            sink.mux(packet)
    return width, height, frames


def _staged_before(clip: Path, sidecar: Path) -> StagedClip | None:
    """The clip staged for this window before, when it is whole (its sidecar is written last)."""
    if not (clip.is_file() and sidecar.is_file()):
        return None
    try:
        staged = StagedClip.model_validate_json(sidecar.read_text())
    except ValueError:
        return None  # a damaged sidecar: staged again
    touch(sidecar)  # used again: the last to be pruned
    return staged


def stage_clip(
    video: VideoInfo,
    chunk: Chunk,
    cache_dir: Path,
    fps: float = 2.0,
    max_pixels: int = 200_704,
    decoder_threads: int = 1,
) -> StagedClip:
    """Stage ``chunk`` of ``video`` as an H.264 clip under ``cache_dir``; reuse it if present.

    ``decoder_threads`` > 1 lets one staging use several cores; keep it at 1 when several
    chunks are staged side by side.
    """
    # Engines want at least 4 frames per clip; a very short window gets a faster rate.
    fps = max(fps, _MIN_FRAMES / max(chunk.duration, 1e-3))
    key = _clip_key(video, chunk, fps, max_pixels)
    folder = cache_dir / "clips" / video.content_id[:16]
    clip_path = folder / f"{key}.mp4"
    meta_path = folder / f"{key}.json"
    if (staged := _staged_before(clip_path, meta_path)) is not None:
        return staged
    import av

    folder.mkdir(parents=True, exist_ok=True)
    # Unique per writer: two tasks may stage the same window at once.
    partial = folder / f"{key}.{uuid.uuid4().hex[:12]}.partial.mp4"
    try:
        width, height, frames = _encode(video, chunk, partial, fps, max_pixels, decoder_threads)
        if frames == 0:
            raise VideoUnreadable(
                f"{video.path} has no decodable frames between {chunk.start:.1f} s and {chunk.end:.1f} s"
            )
        os.replace(partial, clip_path)
    except (av.FFmpegError, OSError) as exc:
        if is_disk_full(exc, folder):  # the cache's disk, not the video, is what failed
            raise disk_full(cache_dir / "clips", "staging clips for Marlin") from exc
        if not isinstance(exc, av.FFmpegError):
            raise
        raise VideoUnreadable(
            f"{video.path} could not be decoded between {chunk.start:.1f} s and {chunk.end:.1f} s: {exc}"
        ) from exc
    finally:
        partial.unlink(missing_ok=True)
    staged = StagedClip(
        chunk=chunk,
        path=clip_path,
        width=width,
        height=height,
        fps=float(fps),
        frames=frames,
        size_bytes=clip_path.stat().st_size,
    )
    # The sidecar is written last: its presence marks a complete clip.
    partial_meta = meta_path.with_suffix(f".{uuid.uuid4().hex[:12]}.tmp")
    partial_meta.write_text(json.dumps(staged.model_dump(mode="json")))
    os.replace(partial_meta, meta_path)
    return staged
