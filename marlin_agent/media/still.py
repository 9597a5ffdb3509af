"""One frame of a video as a JPEG file: an alert's thumbnail (no Pillow needed: FFmpeg encodes it)."""

from __future__ import annotations

from pathlib import Path

import av

from marlin_agent.domain import VideoInfo
from marlin_agent.errors import VideoUnreadable
from marlin_agent.media.sheet import thumbnails


def write_still(video: VideoInfo, at: float, target: Path) -> Path:
    """The upright frame at ``at`` seconds, written as a JPEG at ``target``."""
    pictures = thumbnails(video, at, at, count=1)
    if not pictures:
        raise VideoUnreadable(f"no frame to show at {at:.1f} s in {video.path}")
    picture = pictures[0]
    target.parent.mkdir(parents=True, exist_ok=True)
    frame = av.VideoFrame.from_ndarray(picture, format="rgb24")
    with av.open(str(target), "w", format="image2") as sink:
        stream = sink.add_stream("mjpeg", rate=1)
        stream.width, stream.height, stream.pix_fmt = picture.shape[1], picture.shape[0], "yuvj420p"
        for packet in stream.encode(frame.reformat(format="yuvj420p")):
            sink.mux(packet)
        for packet in stream.encode():
            sink.mux(packet)
    return target
