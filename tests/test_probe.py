"""Probing describes sound videos and names exactly what is wrong with bad ones."""

import shutil

import av
import numpy as np
import pytest

from marlin_agent.errors import VideoEmpty, VideoNotFound, VideoTruncated, VideoUnreadable
from marlin_agent.media import probe_video


def test_probe_reports_duration_size_rate_and_audio(footage):
    info = probe_video(footage["short_field"])
    assert info.duration == pytest.approx(24.0, abs=0.1)
    assert (info.width, info.height, info.fps) == (320, 240, 10.0)
    assert info.has_audio and info.rotation == 0 and info.codec == "h264"


def test_a_video_without_audio_is_fine(footage):
    assert probe_video(footage["long_street"]).has_audio is False


def test_a_rotated_phone_video_reports_its_displayed_size(footage):
    info = probe_video(footage["vertical_night"])
    assert info.rotation == 90
    assert (info.width, info.height) == (180, 320)


def test_the_content_id_survives_a_rename_and_differs_between_videos(footage, tmp_path):
    moved = tmp_path / "renamed.mp4"
    shutil.copy(footage["short_field"], moved)
    assert probe_video(moved).content_id == probe_video(footage["short_field"]).content_id
    assert probe_video(footage["long_street"]).content_id != probe_video(moved).content_id


def test_a_missing_file(tmp_path):
    with pytest.raises(VideoNotFound, match="no such file"):
        probe_video(tmp_path / "nope.mp4")


def test_a_folder_is_not_a_video(tmp_path):
    with pytest.raises(VideoNotFound, match="folder"):
        probe_video(tmp_path)


def test_a_zero_byte_file(tmp_path):
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    with pytest.raises(VideoEmpty, match="0 bytes"):
        probe_video(empty)


def test_a_container_with_no_frames(tmp_path):
    hollow = tmp_path / "hollow.mp4"
    with av.open(str(hollow), "w") as container:
        stream = container.add_stream("libx264", rate=10)
        stream.width, stream.height = 64, 64
        container.start_encoding()
    with pytest.raises(VideoEmpty, match="zero frames"):
        probe_video(hollow)


def test_a_text_file_is_not_a_video(tmp_path):
    text = tmp_path / "notes.mp4"
    text.write_text("these are not frames\n" * 50)
    with pytest.raises(VideoUnreadable, match="not a video"):
        probe_video(text)


def test_an_audio_file_has_no_video_stream(tmp_path):
    sound = tmp_path / "sound.m4a"
    with av.open(str(sound), "w") as container:
        stream = container.add_stream("aac", rate=16000, layout="mono")
        for i in range(20):
            frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="flt", layout="mono")
            frame.sample_rate, frame.pts = 16000, i * 1024
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    with pytest.raises(VideoUnreadable, match="no video stream"):
        probe_video(sound)


def test_a_download_cut_short_is_called_truncated(footage, tmp_path):
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(footage["short_field"].read_bytes()[:60_000])  # the index (moov) is at the end
    with pytest.raises(VideoTruncated, match="truncated"):
        probe_video(cut)


def test_a_streamable_file_cut_short_is_called_truncated(footage, tmp_path):
    fast = tmp_path / "fast.mp4"
    with av.open(str(footage["short_field"])) as source, av.open(str(fast), "w", options={"movflags": "+faststart"}) as sink:
        out = sink.add_stream_from_template(source.streams.video[0])
        for packet in source.demux(source.streams.video[0]):
            if packet.dts is not None:
                packet.stream = out
                sink.mux(packet)
    cut = tmp_path / "fast-cut.mp4"
    data = fast.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(VideoTruncated, match="declares 24.0 s"):
        probe_video(cut)
