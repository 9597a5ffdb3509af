"""Contact sheets: one strip of thumbnails per moment, labelled with its video and times,
so a person sees the answer at a glance."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

from marlin_agent.clock import clock
from marlin_agent.domain import Moment, VideoInfo
from marlin_agent.errors import MissingDependency, VideoUnreadable
from marlin_agent.media.seeking import frames_from, stream_start
from marlin_agent.private_files import as_users

THUMBNAILS = 4
# Written into every sheet (a PNG text chunk), so a file is known for one of ours before it is replaced.
MARK = "marlin-agent contact sheet"
_WIDTH = 240
_LABEL = 22
_GAP = 6


def thumbnails(video: VideoInfo, start: float, end: float, count: int = THUMBNAILS) -> list[np.ndarray]:
    """``count`` upright RGB frames evenly spread over ``[start, end]``, each ``_WIDTH`` px wide."""
    times = [start + (end - start) * (i + 0.5) / count for i in range(count)]
    height = max(2, round(_WIDTH * video.height / video.width) // 2 * 2)
    stored_w, stored_h = (height, _WIDTH) if video.rotation in (90, 270) else (_WIDTH, height)
    pictures = []
    try:
        with av.open(str(video.path), metadata_errors="ignore") as container:
            stream = container.streams.video[0]
            origin = stream_start(stream)
            for t in times:
                chosen = None
                for frame in frames_from(container, stream, t):
                    chosen = frame
                    if frame.time - origin >= t - 1e-3:
                        break
                if chosen is None:
                    continue
                pixels = chosen.reformat(width=stored_w, height=stored_h, format="rgb24").to_ndarray()
                pictures.append(np.ascontiguousarray(np.rot90(pixels, k=video.rotation // 90)))
    except av.FFmpegError as exc:
        raise VideoUnreadable(f"could not read frames from {video.path}: {exc}") from exc
    return pictures


def require_pillow():
    """Pillow's drawing modules, or MissingDependency: checked before a run that will draw a sheet."""
    try:
        from PIL import Image, ImageDraw
    except ImportError as exc:
        raise MissingDependency("Contact sheets", "sheet") from exc
    return Image, ImageDraw


def write_sheet(rows: list[tuple[Moment, VideoInfo]], target: Path) -> Path:
    """A PNG with one labelled strip of thumbnails per moment."""
    Image, ImageDraw = require_pillow()
    strips = []
    for moment, video in rows:
        frames = thumbnails(video, moment.start, moment.end)
        if not frames:
            continue
        height = max(f.shape[0] for f in frames)
        width = sum(f.shape[1] for f in frames) + _GAP * (len(frames) - 1)
        strip = Image.new("RGB", (width, height + _LABEL), (24, 24, 24))
        x = 0
        for frame in frames:
            strip.paste(Image.fromarray(frame), (x, _LABEL))
            x += frame.shape[1] + _GAP
        label = (f"{moment.video.title or Path(moment.video.path).name}  {clock(moment.start)} - {clock(moment.end)}"
                 f"  confidence {moment.confidence:.2f}")
        ImageDraw.Draw(strip).text((4, 4), label, fill=(240, 240, 240))
        strips.append(strip)
    if not strips:
        raise VideoUnreadable("no frames could be read for any moment, so no contact sheet was written")
    sheet = Image.new("RGB", (max(s.width for s in strips), sum(s.height for s in strips) + _GAP * (len(strips) - 1)),
                      (0, 0, 0))
    y = 0
    for strip in strips:
        sheet.paste(strip, (0, y))
        y += strip.height + _GAP
    from PIL.PngImagePlugin import PngInfo

    marked = PngInfo()
    marked.add_text("Software", MARK)
    target.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(target, format="PNG", pnginfo=marked)
    return as_users(target)


def is_sheet(path: Path) -> bool:
    """Whether ``path`` is a contact sheet this tool wrote (read without Pillow: a PNG holding the mark)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return False
    return head.startswith(b"\x89PNG\r\n\x1a\n") and b"Software\x00" + MARK.encode() in head
