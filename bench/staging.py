"""Staging speed: how many times faster than realtime a 720p30 camera-like video is staged.

The input has texture (noise that moves) and x264's default B-frames, so decoding costs
what real footage costs rather than what a flat synthetic picture costs.
"""

from __future__ import annotations

import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from marlin_agent.media import plan_chunks, probe_video, stage_clip

CACHE = Path(__file__).parent / ".cache"


def camera_like_720p30(seconds: int = 120) -> Path:
    """A textured (coarse shapes plus grain) 1280×720 30 fps H.264 file with B-frames; made once and kept in bench/.cache."""
    path = CACHE / f"camera_720p30_{seconds}s_v4.mp4"
    if path.exists():
        return path
    CACHE.mkdir(exist_ok=True)
    rng = np.random.default_rng(7)
    # Natural pictures are smooth at large scales with fine grain on top: coarse noise
    # scaled up, plus sensor-like grain.
    coarse = rng.integers(40, 210, size=((720 + 64) // 16 + 1, (1280 + 64) // 16 + 1)).astype(np.float32)
    smooth = np.kron(coarse, np.ones((16, 16), np.float32))[: 720 + 64, : 1280 + 64]
    texture = np.clip(smooth, 0, 255).astype(np.int16)
    # Sensor grain changes every frame; a few precomputed fields cycled are enough.
    grains = [rng.normal(0, 4, size=(720, 1280)).astype(np.int16) for _ in range(7)]
    chroma = np.full((360, 640), 128, dtype=np.uint8)
    partial = path.with_suffix(".partial.mp4")
    with av.open(str(partial), "w") as container:
        stream = container.add_stream("libx264", rate=Fraction(30))
        stream.width, stream.height, stream.pix_fmt = 1280, 720, "yuv420p"
        stream.options = {"preset": "veryfast", "crf": "20"}
        for n in range(seconds * 30):
            dx, dy = n % 64, (n // 2) % 64
            luma = np.clip(texture[dy : dy + 720, dx : dx + 1280] + grains[n % 7], 0, 255).astype(np.uint8)
            x = (n * 7) % 1100
            luma[200:360, x : x + 160] = 235
            planes = np.concatenate([luma.reshape(-1), chroma.reshape(-1), chroma.reshape(-1)])
            frame = av.VideoFrame.from_ndarray(planes.reshape(720 * 3 // 2, 1280), format="yuv420p")
            frame.pts = n
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    partial.rename(path)
    return path


def flat_720p30(seconds: int = 120) -> Path:
    """The footage generator's own 720p30 look: flat backdrop, moving shapes (~0.2 Mbit/s)."""
    from evals.synthetic.footage import FootageSpec, SyntheticEvent, make_video

    path = CACHE / f"flat_720p30_{seconds}s.mp4"
    if not path.exists():
        CACHE.mkdir(exist_ok=True)
        events = [SyntheticEvent(colour="red", shape="circle", start=t, end=t + 8, motion="left_to_right")
                  for t in range(0, seconds - 8, 20)]
        make_video(path, FootageSpec(duration=seconds, width=1280, height=720, fps=30, events=events, crf=23))
    return path


def _two_side_by_side(video) -> float:
    chunks = plan_chunks(0, video.duration)
    with tempfile.TemporaryDirectory() as cache:
        started = time.perf_counter()
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda c: stage_clip(video, c, Path(cache)), chunks))
        return round(video.duration / (time.perf_counter() - started), 1)


def decode_floor(video) -> float:
    """× realtime of decoding alone on one core, with the same decoder shortcuts staging uses."""
    with av.open(str(video.path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "NONE"
        stream.codec_context.skip_frame = "NONREF"
        stream.codec_context.options = {"skip_loop_filter": "all"}
        started = time.perf_counter()
        for _ in container.decode(stream):
            pass
        return round(video.duration / (time.perf_counter() - started), 1)


def run(seconds: int = 120) -> dict:
    source = camera_like_720p30(seconds)
    video = probe_video(source)
    chunks = plan_chunks(0, video.duration)
    results = {"decode_only_1_core_x_realtime": decode_floor(video)}
    for workers in (1, 2):
        with tempfile.TemporaryDirectory() as cache:
            started = time.perf_counter()
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(lambda c: stage_clip(video, c, Path(cache)), chunks))
            elapsed = time.perf_counter() - started
        results[f"staging_{workers}_thread_x_realtime"] = round(video.duration / elapsed, 1)
    with tempfile.TemporaryDirectory() as cache:
        started = time.perf_counter()
        stage_clip(video, chunks[0], Path(cache), decoder_threads=2)
        results["one_chunk_2_decoder_threads_x_realtime"] = round(chunks[0].duration / (time.perf_counter() - started), 1)
        started = time.perf_counter()
        stage_clip(video, chunks[0], Path(cache))
        results["cached_restage_ms"] = round((time.perf_counter() - started) * 1000, 2)
    flat = probe_video(flat_720p30(seconds))
    results["flat_synthetic_2_thread_x_realtime"] = _two_side_by_side(flat)
    bitrate = video.size_bytes * 8 / video.duration / 1e6
    return {"input": f"{video.width}x{video.height} {video.fps:g} fps, {video.duration:.0f} s, {bitrate:.1f} Mbit/s",
            **results}


if __name__ == "__main__":
    print(run())
