"""The simulator's eyes: decode a clip the way an engine would and see what is in it.

Frames are sampled like the engines sample for Marlin (2 fps, 4..240 frames); each one is
searched for the palette's colours, and runs of sightings become tracks with a shape, a
span and a direction of motion. Nothing here reads a manifest: it only looks at pixels.
"""

from __future__ import annotations

import io
import math
from collections import Counter
from dataclasses import dataclass, field

import av
import numpy as np

from evals.synthetic import barcode
from evals.synthetic.palette import BACKDROPS, OBJECT_COLOURS, describe

_COLOUR_TOLERANCE = 48
_MIN_AREA_SHARE = 0.003


@dataclass(frozen=True)
class Track:
    colour: str
    shape: str
    start: float
    end: float
    motion: str

    @property
    def text(self) -> str:
        return describe(self.colour, self.shape, self.motion)


@dataclass(frozen=True)
class Sighting:
    """A realistic-world event on screen: its number in the scene and when, in clip seconds."""

    event: int
    start: float
    end: float


@dataclass
class Observation:
    duration: float
    frames_sampled: int
    backdrop: str
    tracks: list[Track] = field(default_factory=list)
    scene: int = 0  # a realistic-world scene number, read off the frames' strip; 0 for the toy world
    sightings: list[Sighting] = field(default_factory=list)

    @property
    def key(self) -> str:
        """What the clip shows, to tell one clip from another: its scene, length and events, at a tenth of
        a second. Not its bytes: an encoder of another version writes the same footage in other bytes, and
        a world whose wordings followed the bytes came out worded otherwise on every machine."""
        events = ";".join(f"{s.event}:{s.start:.1f}-{s.end:.1f}" for s in self.sightings)
        return f"{self.scene}|{self.duration:.1f}|{events}"


def _shape_of(mask: np.ndarray) -> tuple[str, float] | None:
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return None
    box = (rows[-1] - rows[0] + 1) * (cols[-1] - cols[0] + 1)
    fill = mask.sum() / box
    shape = "square" if fill > 0.9 else "circle" if fill > 0.64 else "triangle"
    centre_x = (cols[0] + cols[-1]) / 2 / mask.shape[1]
    return shape, float(centre_x)


def _backdrop_of(pixels: np.ndarray) -> str:
    border = np.concatenate([pixels[0], pixels[-1], pixels[:, 0], pixels[:, -1]]).astype(np.int32)
    median = np.median(border, axis=0)
    return min(BACKDROPS, key=lambda name: float(np.abs(median - BACKDROPS[name][0]).sum()))


def _sample_times(duration: float, fps: float, min_frames: int, max_frames: int) -> list[float]:
    count = min(max_frames, max(min_frames, math.ceil(duration * fps)))
    step = duration / count
    return [i * step for i in range(count)]


def _frames_at(data: bytes, times: list[float]):
    """Yield (time, RGB array) for the last frame shown at or before each sample time."""
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        origin = float(stream.start_time * stream.time_base) if stream.start_time else 0.0
        index = 0
        previous = None
        for frame in container.decode(stream):
            t = frame.time - origin
            while index < len(times) and times[index] < t - 1e-6:
                yield times[index], (previous if previous is not None else frame).to_ndarray(format="rgb24")
                index += 1
            previous = frame
        while previous is not None and index < len(times):
            yield times[index], previous.to_ndarray(format="rgb24")
            index += 1


def clip_duration(data: bytes) -> float:
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        if stream.duration is not None:
            return float(stream.duration * stream.time_base)
        return container.duration / av.time_base


def look(data: bytes, fps: float = 2.0, min_frames: int = 4, max_frames: int = 240) -> Observation:
    """Watch the clip in ``data`` and report what it shows, in the clip's own seconds."""
    duration = clip_duration(data)
    times = _sample_times(duration, fps, min_frames, max_frames)
    step = duration / len(times)
    sightings: dict[str, list[tuple[float, str, float]]] = {name: [] for name in OBJECT_COLOURS}
    backdrops: Counter[str] = Counter()
    strips: list[tuple[float, tuple[int, int] | None]] = []
    sampled = 0
    for t, pixels in _frames_at(data, times):
        sampled += 1
        strips.append((t, barcode.read(pixels)))
        if strips[0][1] is not None:
            continue  # a realistic-world frame: the strip says what is on screen
        backdrops[_backdrop_of(pixels)] += 1
        small = pixels[::2, ::2].astype(np.int16)
        min_area = _MIN_AREA_SHARE * small.shape[0] * small.shape[1]
        for name, rgb in OBJECT_COLOURS.items():
            mask = (np.abs(small - np.array(rgb, dtype=np.int16)) < _COLOUR_TOLERANCE).all(axis=2)
            if mask.sum() >= min_area:
                found = _shape_of(mask)
                if found:
                    sightings[name].append((t, *found))
    if strips and strips[0][1] is not None:
        return Observation(duration=duration, frames_sampled=sampled, backdrop="", scene=strips[0][1][0],
                           sightings=_runs(strips, step, duration))
    tracks = [track for name, seen in sightings.items() for track in _tracks(name, seen, step, duration)]
    tracks.sort(key=lambda track: track.start)
    backdrop = backdrops.most_common(1)[0][0] if backdrops else "field"
    return Observation(duration=duration, frames_sampled=sampled, backdrop=backdrop, tracks=tracks)


def _tracks(colour: str, seen: list[tuple[float, str, float]], step: float, duration: float) -> list[Track]:
    """Join sightings no more than one missed sample apart into tracks."""
    runs: list[list[tuple[float, str, float]]] = []
    for sighting in seen:
        if runs and sighting[0] - runs[-1][-1][0] <= 2 * step + 1e-6:
            runs[-1].append(sighting)
        else:
            runs.append([sighting])
    tracks = []
    for run in runs:
        shape = Counter(s for _, s, _ in run).most_common(1)[0][0]
        drift = run[-1][2] - run[0][2]
        motion = "left_to_right" if drift > 0.25 else "right_to_left" if drift < -0.25 else "still"
        end = min(duration, run[-1][0] + step)
        tracks.append(Track(colour=colour, shape=shape, start=run[0][0], end=end, motion=motion))
    return tracks


def _runs(strips: list[tuple[float, tuple[int, int] | None]], step: float, duration: float) -> list[Sighting]:
    """Consecutive samples showing the same event, as sightings."""
    found: list[Sighting] = []
    current, since = 0, 0.0
    for t, read in strips + [(duration, None)]:
        event = read[1] if read else 0
        if event != current:
            if current:
                found.append(Sighting(event=current, start=since, end=min(duration, t)))
            current, since = event, t
    return found
