"""Staged clips are exact, small, upright, silent re-encodes, and are reused."""

import av
import numpy as np
import pytest

from evals.synthetic.footage import as_transport_stream
from evals.synthetic.palette import OBJECT_COLOURS
from marlin_agent.domain import Chunk
from marlin_agent.media import probe_video, stage_clip
from marlin_agent.media.stage import staged_size


def decode(path):
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        info = (stream.codec_context.name, len(container.streams.audio), float(stream.average_rate))
        frames = [(f.time, f.to_ndarray(format="rgb24")) for f in container.decode(stream)]
    return info, frames


def first_time_showing(frames, rgb):
    for t, pixels in frames:
        if (np.abs(pixels.astype(int) - rgb) < 48).all(axis=2).sum() > 50:
            return t
    return None


@pytest.fixture(scope="module")
def late_event(make_footage):
    """An 80 s video whose red circle appears at 65.0 s: inside the second chunk."""
    return make_footage("late_event", duration=80, events=[{"colour": "red", "shape": "circle", "start": 65.0, "end": 70.0}])


def test_a_clip_is_h264_without_audio_at_the_staging_rate(footage, tmp_path):
    info = probe_video(footage["short_field"])
    clip = stage_clip(info, Chunk(index=0, start=0, end=24.0), tmp_path, fps=4.0)
    (codec, audio_streams, rate), frames = decode(clip.path)
    assert codec == "h264" and audio_streams == 0 and rate == 4.0
    assert clip.frames == len(frames) == 96


def test_a_clip_starts_exactly_at_the_chunk_start(late_event, tmp_path):
    info = probe_video(late_event)
    clip = stage_clip(info, Chunk(index=1, start=60.0, end=80.0), tmp_path, fps=4.0)
    _, frames = decode(clip.path)
    assert first_time_showing(frames, OBJECT_COLOURS["red"]) == pytest.approx(5.0, abs=0.26)
    assert len(frames) == 80  # 20 s at 4 fps


def test_frames_fit_the_pixel_budget_in_multiples_of_28():
    for width, height in [(1920, 1080), (1280, 720), (720, 1280), (3840, 2160), (320, 240)]:
        w, h = staged_size(width, height, 200_704)
        assert w * h <= 200_704 and w % 28 == 0 and h % 28 == 0
        assert abs(w / h - width / height) < 0.12


def test_a_rotated_video_is_staged_upright(footage, tmp_path):
    info = probe_video(footage["vertical_night"])
    clip = stage_clip(info, Chunk(index=0, start=0, end=30.0), tmp_path)
    _, frames = decode(clip.path)
    height, width, _ = frames[0][1].shape
    assert height > width
    # The white square is drawn in the upper part of the displayed picture.
    t, pixels = next((t, p) for t, p in frames if t >= 12)
    rows = np.flatnonzero((np.abs(pixels.astype(int) - OBJECT_COLOURS["white"]) < 48).all(axis=2).any(axis=1))
    assert rows.size and rows.mean() < height / 2


def test_staging_twice_reuses_the_cached_clip(footage, tmp_path):
    info = probe_video(footage["short_field"])
    chunk = Chunk(index=0, start=0, end=24.0)
    first = stage_clip(info, chunk, tmp_path)
    stamp = first.path.stat().st_mtime_ns
    second = stage_clip(info, chunk, tmp_path)
    assert second == first and second.path.stat().st_mtime_ns == stamp


def test_different_chunks_and_rates_get_different_clips(footage, tmp_path):
    info = probe_video(footage["short_field"])
    a = stage_clip(info, Chunk(index=0, start=0, end=12.0), tmp_path)
    b = stage_clip(info, Chunk(index=1, start=12.0, end=24.0), tmp_path)
    c = stage_clip(info, Chunk(index=0, start=0, end=12.0), tmp_path, fps=4.0)
    assert len({a.path, b.path, c.path}) == 3


def test_no_partial_files_are_left_behind(footage, tmp_path):
    info = probe_video(footage["short_field"])
    stage_clip(info, Chunk(index=0, start=0, end=24.0), tmp_path)
    assert not list(tmp_path.rglob("*.partial.mp4")) and not list(tmp_path.rglob("*.tmp"))


def test_staging_the_same_window_from_two_threads_at_once_gives_one_sound_clip(footage, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    info = probe_video(footage["short_field"])
    chunk = Chunk(index=0, start=2.0, end=20.0)
    with ThreadPoolExecutor(4) as pool:
        clips = list(pool.map(lambda _: stage_clip(info, chunk, tmp_path), range(4)))
    assert len({c.path for c in clips}) == 1
    (_, _, _), frames = decode(clips[0].path)
    assert len(frames) == 36  # 18 s at the default 2 fps


def test_a_very_short_window_still_gets_the_four_frames_engines_need(footage, tmp_path):
    info = probe_video(footage["short_field"])
    clip = stage_clip(info, Chunk(index=0, start=5.0, end=6.0), tmp_path)
    (_, _, _), frames = decode(clip.path)
    assert clip.frames == len(frames) >= 4


@pytest.mark.parametrize(("name", "m2ts"), [("late.ts", False), ("late.m2ts", True)])
def test_a_transport_stream_is_read_whole_and_staged_from_the_frame_shown_at_the_chunk_start(
        late_event, tmp_path, name, m2ts):
    """A seek in a transport stream lands on a packet, not a keyframe: the frames a decoder gives from there
    start at the next keyframe, seconds later. Read from the keyframe before, the clip shows what was there."""
    stream = as_transport_stream(late_event, tmp_path / name, m2ts)
    info = probe_video(stream)  # it was "truncated: holds no frames"
    assert info.duration == pytest.approx(80.0, abs=0.5)
    clip = stage_clip(info, Chunk(index=1, start=60.0, end=80.0), tmp_path, fps=4.0)
    _, frames = decode(clip.path)
    assert first_time_showing(frames, OBJECT_COLOURS["red"]) == pytest.approx(5.0, abs=0.26)
    assert len(frames) == 80
