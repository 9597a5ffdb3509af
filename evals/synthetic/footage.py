"""Draw synthetic videos with known events: the ground truth tests and evals rely on.

A video is a still backdrop on which coloured shapes appear for known spans, standing
still or crossing the frame. Each video gets a JSON manifest beside it with the truth.
"""

from __future__ import annotations

import math
import subprocess
import tempfile
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from pydantic import BaseModel, Field, model_validator

from evals.synthetic.palette import BACKDROPS, MOTIONS, OBJECT_COLOURS, SHAPES, describe


class SyntheticEvent(BaseModel):
    colour: str
    shape: str
    start: float
    end: float
    motion: str = "still"

    @model_validator(mode="after")
    def _known(self) -> SyntheticEvent:
        if self.colour not in OBJECT_COLOURS or self.shape not in SHAPES or self.motion not in MOTIONS:
            raise ValueError(f"unknown colour/shape/motion: {self.colour}/{self.shape}/{self.motion}")
        if not 0 <= self.start < self.end:
            raise ValueError("an event needs 0 <= start < end")
        return self

    @property
    def text(self) -> str:
        return describe(self.colour, self.shape, self.motion)

    @property
    def query(self) -> str:
        """How a person would ask for it."""
        return f"the {self.colour} {self.shape}"


class SpeechLine(BaseModel):
    """A sentence spoken (by espeak-ng) from ``start``; ``end`` is filled in when it is made."""

    text: str
    start: float
    end: float | None = None


class FootageSpec(BaseModel):
    duration: float = Field(gt=0)
    width: int = 320
    height: int = 240
    fps: float = 10.0
    backdrop: str = "field"
    events: list[SyntheticEvent] = []
    audio: bool = False
    speech: list[SpeechLine] = []
    rotation: int = 0
    crf: int = 18

    @model_validator(mode="after")
    def _consistent(self) -> FootageSpec:
        if self.backdrop not in BACKDROPS:
            raise ValueError(f"unknown backdrop {self.backdrop}")
        for a in self.events:
            if a.end > self.duration + 1e-6:
                raise ValueError(f"event {a.text} ends after the video")
            for b in self.events:
                if a is not b and a.colour == b.colour and a.start < b.end and b.start < a.end:
                    raise ValueError("two objects of one colour may not share the screen")
        return self


def _mask(shape: str, size: int) -> np.ndarray:
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) + 0.5
    if shape == "circle":
        r = size / 2
        return (x - r) ** 2 + (y - r) ** 2 <= r * r
    if shape == "square":
        return np.ones((size, size), dtype=bool)
    # An upright isosceles triangle filling half its box.
    return np.abs(x - size / 2) <= y / 2


def _lanes(spec: FootageSpec) -> dict[int, int]:
    """Give each event a vertical lane so simultaneous objects never overlap."""
    lanes: dict[int, int] = {}
    for index, event in enumerate(spec.events):
        busy = {
            lanes[j]
            for j, other in enumerate(spec.events[:index])
            if other.start < event.end and event.start < other.end
        }
        lanes[index] = next(lane for lane in range(len(spec.events) + 1) if lane not in busy)
    return lanes


def draw_frame(spec: FootageSpec, t: float, lanes: dict[int, int], masks: dict[int, np.ndarray]) -> np.ndarray:
    """The displayed picture at time ``t`` (RGB, display orientation)."""
    backdrop, _ = BACKDROPS[spec.backdrop]
    picture = np.empty((spec.height, spec.width, 3), dtype=np.uint8)
    picture[:] = backdrop
    lane_count = max([*lanes.values(), 2]) + 1
    for index, event in enumerate(spec.events):
        if not event.start <= t < event.end:
            continue
        mask = masks[index]
        size = mask.shape[0]
        progress = (t - event.start) / (event.end - event.start)
        span = spec.width - size
        if event.motion == "left_to_right":
            x = int(span * progress)
        elif event.motion == "right_to_left":
            x = int(span * (1 - progress))
        else:
            x = (span * (index % 3 + 1)) // 4
        lane_height = spec.height / lane_count
        y = int(min(spec.height - size, lanes[index] * lane_height + (lane_height - size) / 2))
        y = max(0, y)
        region = picture[y : y + size, x : x + size]
        region[mask[: region.shape[0], : region.shape[1]]] = OBJECT_COLOURS[event.colour]
    return picture


def make_video(path: Path, spec: FootageSpec) -> Path:
    """Write ``spec`` as an H.264 MP4 at ``path`` and its truth as ``path`` + ``.json``."""
    lanes = _lanes(spec)
    object_size = max(8, int(min(spec.width, spec.height) * 0.22))
    masks = {i: _mask(event.shape, object_size) for i, event in enumerate(spec.events)}
    speech = write_mp4(path, spec, lambda t: draw_frame(spec, t, lanes, masks))
    spec = spec.model_copy(update={"speech": speech})
    path.with_suffix(path.suffix + ".json").write_text(spec.model_dump_json(indent=2))
    return path


def write_mp4(path: Path, spec: FootageSpec, paint) -> list[SpeechLine]:
    """Encode ``paint(t)`` (an RGB picture in display orientation) for every frame of ``spec``, with
    its soundtrack; return the speech lines with their measured ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rate = Fraction(spec.fps).limit_denominator(1001)
    frame_count = math.ceil(spec.duration * spec.fps - 1e-9)
    stored_w, stored_h = (spec.height, spec.width) if spec.rotation in (90, 270) else (spec.width, spec.height)
    spoken = list(spec.speech)
    with av.open(str(path), mode="w") as container:
        video = container.add_stream("libx264", rate=rate)
        video.width, video.height, video.pix_fmt = stored_w, stored_h, "yuv420p"
        video.options = {"preset": "ultrafast", "crf": str(spec.crf)}
        if spec.rotation:
            video.set_display_rotation(spec.rotation)
        has_audio = spec.audio or bool(spec.speech)
        audio = container.add_stream("aac", rate=16000, layout="mono") if has_audio else None
        for n in range(frame_count):
            picture = paint(n / spec.fps)
            if spec.rotation:
                picture = np.ascontiguousarray(np.rot90(picture, k=-(spec.rotation // 90)))
            frame = av.VideoFrame.from_ndarray(picture, format="rgb24")
            frame.pts = n
            frame.time_base = 1 / rate
            for packet in video.encode(frame):
                container.mux(packet)
        for packet in video.encode():
            container.mux(packet)
        if audio is not None:
            samples, spoken = _soundtrack(spec)
            _write_audio(container, audio, samples)
    return spoken


_RATE = 16000


def speak(text: str) -> np.ndarray:
    """``text`` spoken by espeak-ng, as 16 kHz mono float32."""
    with tempfile.TemporaryDirectory() as scratch:
        wav = Path(scratch) / "speech.wav"
        subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(wav), text], check=True,
                       capture_output=True)
        with av.open(str(wav)) as container:
            resampler = av.AudioResampler(format="flt", layout="mono", rate=_RATE)
            pieces = [f.to_ndarray().reshape(-1) for frame in container.decode(audio=0) for f in resampler.resample(frame)]
            pieces += [f.to_ndarray().reshape(-1) for f in resampler.resample(None)]
    return np.concatenate(pieces).astype(np.float32)


def _soundtrack(spec: FootageSpec) -> tuple[np.ndarray, list[SpeechLine]]:
    """A faint hum with any speech laid over it, and the speech lines with their measured ends."""
    total = int(spec.duration * _RATE)
    samples = (np.sin(2 * np.pi * 120 * np.arange(total) / _RATE) * 0.01).astype(np.float32)
    spoken = []
    for line in spec.speech:
        voice = speak(line.text)
        at = int(line.start * _RATE)
        voice = voice[: max(0, total - at)]
        samples[at : at + len(voice)] += voice * 0.8
        spoken.append(line.model_copy(update={"end": round((at + len(voice)) / _RATE, 3)}))
    return samples, spoken


def _write_audio(container, stream, samples: np.ndarray) -> None:
    block = 1024
    for offset in range(0, len(samples), block):
        chunk = samples[offset : offset + block].reshape(1, -1)
        frame = av.AudioFrame.from_ndarray(chunk, format="flt", layout="mono")
        frame.sample_rate = _RATE
        frame.pts = offset
        for packet in stream.encode(frame):
            container.mux(packet)
    for packet in stream.encode():
        container.mux(packet)


def load_truth(path: Path) -> FootageSpec:
    return FootageSpec.model_validate_json(path.with_suffix(path.suffix + ".json").read_text())


def standard_library(folder: Path) -> dict[str, Path]:
    """A small library covering the shapes footage takes: short, long, vertical, with audio."""
    specs = {
        "short_field": FootageSpec(
            duration=24, backdrop="field", audio=True,
            events=[
                SyntheticEvent(colour="red", shape="circle", start=4.0, end=9.0),
                SyntheticEvent(colour="blue", shape="square", start=12.5, end=20.0, motion="left_to_right"),
            ],
        ),
        "long_street": FootageSpec(
            duration=200, backdrop="street", fps=8,
            events=[
                SyntheticEvent(colour="yellow", shape="triangle", start=15.0, end=22.0),
                SyntheticEvent(colour="red", shape="square", start=70.0, end=78.0, motion="right_to_left"),
                SyntheticEvent(colour="white", shape="circle", start=131.0, end=140.0),
                SyntheticEvent(colour="purple", shape="circle", start=185.0, end=193.0),
            ],
        ),
        "vertical_night": FootageSpec(
            duration=30, width=180, height=320, backdrop="night", rotation=90,
            events=[SyntheticEvent(colour="white", shape="square", start=10.0, end=16.0)],
        ),
    }
    return {name: make_video(folder / f"{name}.mp4", spec) for name, spec in specs.items()}


def as_transport_stream(source: Path, target: Path, m2ts: bool = False) -> Path:
    """The same packets in an MPEG transport stream (``m2ts``: the 192-byte packets Blu-ray and AVCHD cameras
    write): a container without a keyframe index, readable at any length, as a camera writing it leaves it."""
    options = {"mpegts_m2ts_mode": "1"} if m2ts else {}
    with av.open(str(source)) as reading, av.open(str(target), "w", format="mpegts", options=options) as writing:
        video = reading.streams.video[0]
        out = writing.add_stream_from_template(video)
        for packet in reading.demux(video):
            if packet.dts is not None:
                packet.stream = out
                writing.mux(packet)
    return target
