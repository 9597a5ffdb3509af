"""Decode a video from a moment on, in any container.

MP4, Matroska and the like keep an index of keyframes, and a backward seek lands on the keyframe before the
moment asked. MPEG-TS and M2TS keep none: a seek lands on a packet near the moment, the decoder shows nothing
until the next keyframe, which may be many seconds later, and frames read from there stand in for footage
they are not. ``frames_from`` seeks further back in those until the first frame decoded is not after the
moment; in an indexed container one seek is right (and nothing decodable after it means the file is cut).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

# PyAV (a tenth of a second to import) is imported where a file is read: an `ask` over footage already
# probed reads none.
if TYPE_CHECKING:
    import av


def stream_start(stream: av.video.stream.VideoStream) -> float:
    """The stream's first timestamp: video time is measured from here (MPEG-TS starts late)."""
    if stream.start_time is None:
        return 0.0
    return float(stream.start_time * stream.time_base)


# Containers FFmpeg seeks in by packets rather than through a keyframe index (transport and program
# streams, raw elementary streams).
_WITHOUT_INDEX = frozenset({"mpegts", "mpeg", "mpegvideo", "h264", "hevc", "m4v"})
# Seconds before the moment asked that decoding starts from in those, tried in turn (the last: the beginning).
_BACK = (0.0, 5.0, 30.0, 120.0, float("inf"))
# A first frame this far after the moment asked is the next keyframe, not the frame shown then.
_LATE = 0.5


def frames_from(container: av.container.InputContainer, stream, start: float) -> Iterator[av.VideoFrame]:
    """The decoded frames of ``stream`` from the one shown at ``start`` (seconds from the stream's origin)
    on, frames without a time left out."""
    origin = stream_start(stream)
    indexed = not _WITHOUT_INDEX & set(container.format.name.split(","))
    for back in (0.0,) if indexed else _BACK:
        at = max(0.0, start - back)
        container.seek(max(0, int((origin + at) / stream.time_base)), stream=stream, backward=True)
        frames = (frame for frame in container.decode(stream) if frame.time is not None)
        first = next(frames, None)
        # Nothing decodable from here, or only from the next keyframe on: the one before is further back.
        if not indexed and at > 0 and (first is None or first.time - origin > start + _LATE):
            continue
        if first is not None:
            yield first
            yield from frames
        return
