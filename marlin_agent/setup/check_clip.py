"""A tiny generated video for checking that a server really takes video (setup, doctor)."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np


def write_check_clip(path: Path, seconds: float = 4.0, fps: int = 8) -> Path:
    """A white square crossing a dark background: enough for any video model to describe."""
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    width, height = 224, 160
    partial = path.with_suffix(".part.mp4")
    with av.open(str(partial), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        frames = int(seconds * fps)
        for index in range(frames):
            image = np.full((height, width, 3), (20, 30, 60), dtype=np.uint8)
            x = int((width - 40) * index / max(1, frames - 1))
            image[60:100, x:x + 40] = 255
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    partial.replace(path)
    return path
