"""Transcripts: real Whisper on espeak-ng speech, subtitles, and videos with nothing to hear."""

import pytest

from marlin_agent.library.transcripts import Transcriber, audio_windows, parse_subtitles


@pytest.fixture(scope="module")
def transcriber(offline_models):
    return Transcriber(offline_models["MARLIN_WHISPER_MODEL"])


def test_speech_is_transcribed_with_word_times(transcriber, speech_video):
    transcript = transcriber.transcribe(speech_video)
    assert transcript.language == "en" and transcript.source.startswith("whisper:")
    first, second = transcript.lines
    assert "goalkeeper" in first.text.lower() and first.start == pytest.approx(5.0, abs=0.8)
    assert "referee" in second.text.lower() and second.start == pytest.approx(18.0, abs=0.8)
    assert [w.text for w in first.words][:2] == ["The", "goalkeeper"]
    assert all(first.start - 0.01 <= w.start <= w.end <= first.end + 0.01 for w in first.words)


def test_long_audio_is_read_in_windows_without_shifting_times(offline_models, speech_video):
    small_windows = Transcriber(offline_models["MARLIN_WHISPER_MODEL"], window_seconds=12)
    lines = small_windows.transcribe(speech_video).lines
    assert any("referee" in line.text.lower() and line.start == pytest.approx(18.0, abs=0.8) for line in lines)


def test_windows_cover_the_audio_exactly_once(speech_video):
    windows = list(audio_windows(speech_video, window_seconds=10, search_seconds=3))
    assert len(windows) >= 3
    position = 0.0
    for offset, samples in windows:
        assert offset == pytest.approx(position, abs=1e-6)
        position = offset + samples.size / 16000
    assert position == pytest.approx(30.0, abs=0.1)


def test_a_video_without_audio_has_an_empty_transcript(transcriber, footage):
    transcript = transcriber.transcribe(footage["long_street"])
    assert transcript.lines == [] and transcript.source == "none"


def test_a_hum_without_speech_has_no_lines(transcriber, footage):
    assert transcriber.transcribe(footage["short_field"]).lines == []


def test_subtitles_become_transcript_lines(tmp_path):
    vtt = tmp_path / "talk.en.vtt"
    vtt.write_text("WEBVTT\n\n00:00:01.000 --> 00:00:03.500\n<c>Hello</c> there\n\n"
                   "00:01:02.250 --> 00:01:04.000\nsecond line\nwraps here\n\n"
                   "00:01:02.250 --> 00:01:04.000\nsecond line\nwraps here\n")
    transcript = parse_subtitles(vtt)
    assert transcript.source == "subtitles"
    assert [(cue.start, cue.end, cue.text) for cue in transcript.lines] == [
        (1.0, 3.5, "Hello there"), (62.25, 64.0, "second line wraps here")]


def test_youtube_rolling_captions_keep_each_line_once_without_word_timing_tags(tmp_path):
    vtt = tmp_path / "match.en.vtt"
    vtt.write_text(
        "WEBVTT\nKind: captions\nLanguage: en\n\n"
        "00:00:00.480 --> 00:00:03.110 align:start position:0%\n \n"
        "the<00:00:00.640><c> goalkeeper</c><00:00:01.040><c> saves</c>\n\n"
        "00:00:03.110 --> 00:00:03.120 align:start position:0%\nthe goalkeeper saves\n \n\n"
        "00:00:03.120 --> 00:00:05.500 align:start position:0%\nthe goalkeeper saves\n"
        "the<00:00:03.300><c> penalty</c>\n\n"
        "00:00:06.000 --> 00:00:07.000\n<i>Fish</i> &amp; chips\n")
    lines = parse_subtitles(vtt).lines
    assert [(cue.start, cue.end, cue.text) for cue in lines] == [
        (0.48, 3.11, "the goalkeeper saves"), (3.12, 5.5, "the goalkeeper saves the penalty"),
        (6.0, 7.0, "Fish & chips")]


def test_srt_subtitles_are_read_too(tmp_path):
    srt = tmp_path / "talk.en.srt"
    srt.write_text("1\n00:00:01,000 --> 00:00:03,500\n<b>Hello</b> there\n\n"
                   "2\n01:00:02,250 --> 01:00:04,000\nsecond line\nwraps here\n")
    assert [(cue.start, cue.end, cue.text) for cue in parse_subtitles(srt).lines] == [
        (1.0, 3.5, "Hello there"), (3602.25, 3604.0, "second line wraps here")]


def test_a_broken_subtitle_file_is_a_specific_error(tmp_path):
    from marlin_agent.library.transcripts import SubtitlesUnreadable

    broken = tmp_path / "broken.en.vtt"
    broken.write_text("this is not a subtitle file\n")
    with pytest.raises(SubtitlesUnreadable, match="broken.en.vtt"):
        parse_subtitles(broken)
