"""Transcripts with word times: faster-whisper on the audio, or a video's own subtitles.

Audio is decoded here with PyAV (16 kHz mono float32) and handed to faster-whisper as an
array: faster-whisper's own file reader uses an argument PyAV 19 removed. A video with no
audio stream, or only silence, has an empty transcript, not an error.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import os
import uuid
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from marlin_agent.domain import VideoInfo
from marlin_agent.errors import InputError, MissingDependency, ModelUnavailable, VideoUnreadable
from marlin_agent.loaded_model import LoadedOnce
from marlin_agent.model_store import local_model, resolve_model

SAMPLE_RATE = 16_000


class Word(BaseModel):
    start: float
    end: float
    text: str


class TranscriptLine(BaseModel):
    start: float
    end: float
    text: str
    words: list[Word] = []


class Transcript(BaseModel):
    source: str  # "whisper:<model>", "subtitles" or "none"
    language: str | None = None
    lines: list[TranscriptLine] = []


def audio_windows(path: Path, window_seconds: float = 300.0, search_seconds: float = 10.0):
    """Yield (offset seconds, 16 kHz mono float32 samples) windows of the audio track.

    Long audio is never held whole: each window ends at the quietest tenth of a second in
    its last ``search_seconds``, so a cut rarely lands inside a word. Yields nothing when the
    file has no audio stream.
    """
    import av  # decoding is only for transcribing: a search over the library never loads it

    window = int(window_seconds * SAMPLE_RATE)
    with av.open(str(path), metadata_errors="ignore") as container:
        if not container.streams.audio:
            return
        resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
        pending: list[np.ndarray] = []
        held = 0
        offset = 0

        def frames():
            try:
                for frame in container.decode(container.streams.audio[0]):
                    yield from resampler.resample(frame)
                yield from resampler.resample(None)
            except av.FFmpegError as exc:
                raise VideoUnreadable(f"the audio of {path} could not be decoded: {exc}") from exc

        for converted in frames():
            samples = converted.to_ndarray().reshape(-1)
            pending.append(samples)
            held += samples.size
            if held >= window:
                buffer = np.concatenate(pending)
                cut = _quiet_cut(buffer[:window], int(search_seconds * SAMPLE_RATE))
                yield offset / SAMPLE_RATE, np.asarray(buffer[:cut], dtype=np.float32)
                offset += cut
                pending, held = [buffer[cut:]], buffer.size - cut
        if held:
            yield offset / SAMPLE_RATE, np.asarray(np.concatenate(pending), dtype=np.float32)


def _quiet_cut(samples: np.ndarray, search: int) -> int:
    """The index, within the last ``search`` samples, of the quietest 0.1 s."""
    step = SAMPLE_RATE // 10
    tail_start = max(0, samples.size - search)
    tail = samples[tail_start:]
    if tail.size < step:
        return samples.size
    energy = np.add.reduceat(tail[: tail.size // step * step] ** 2, np.arange(0, tail.size // step * step, step))
    return tail_start + int(np.argmin(energy)) * step + step // 2


def resolve_whisper_model(name: str) -> tuple[str, str, str]:
    """(model, device, compute type): "auto" means small on an NVIDIA GPU, base on a CPU."""
    try:
        import ctranslate2
        gpus = ctranslate2.get_cuda_device_count()
    except (ImportError, RuntimeError):
        gpus = 0
    device, compute = ("cuda", "float16") if gpus else ("cpu", "int8")
    if name == "auto":
        name = "small" if gpus else "base"
    return name, device, compute


# What a faster-whisper model is fetched as (its CTranslate2 conversion on the hub).
_WHISPER_FILES = ["config.json", "model.bin", "tokenizer.json"]
_WHISPER_OPTIONAL = ["vocabulary.*", "preprocessor_config.json"]


def whisper_repository(name: str) -> str:
    """The hub repository of a faster-whisper size name ("base" -> Systran/faster-whisper-base)."""
    if "/" in name:
        return name
    try:
        from faster_whisper.utils import _MODELS  # its own table of sizes; private, so only consulted
        return _MODELS.get(name, f"Systran/faster-whisper-{name}")
    except ImportError:
        return f"Systran/faster-whisper-{name}"


class Transcriber(LoadedOnce):
    """Loads the Whisper model once, on first use, and transcribes whole videos."""

    def __init__(self, model: str = "auto", window_seconds: float = 300.0, cache: Path | None = None) -> None:
        """``model``: a size ("base"), a hub repository or a local CTranslate2 folder; ``cache``: where
        downloaded models are kept (the hub's own cache when not given)."""
        super().__init__()
        self.model_name, self.device, self.compute_type = resolve_whisper_model(model)
        self.window_seconds = window_seconds
        self.cache = cache
        self._folder: Path | str | None = None

    def folder(self) -> Path | str:
        """The model's folder, downloaded into the cache once; fails fast with no hub and no copy."""
        if self._folder is None:
            if os.path.isdir(self.model_name) or self.cache is None:
                self._folder = self.model_name
            else:
                try:
                    self._folder = resolve_model(
                        whisper_repository(self.model_name), self.cache, _WHISPER_FILES, _WHISPER_OPTIONAL,
                        what="speech (Whisper) model", env_var="MARLIN_WHISPER_MODEL")
                except ModelUnavailable as exc:
                    exc.hint = f"{exc.hint} Or leave speech out with --no-transcribe."
                    raise
        return self._folder

    def local_folder(self) -> Path | None:
        """The model's folder if it is on this machine already (no download)."""
        if os.path.isdir(self.model_name):
            return Path(self.model_name)
        if self.cache is None:
            return None

        return local_model(whisper_repository(self.model_name), self.cache, _WHISPER_FILES)

    @property
    def label(self) -> str:
        return f"whisper:{Path(self.model_name).name if os.path.isdir(self.model_name) else self.model_name}"

    def _open(self):
        try:
            from faster_whisper import WhisperModel
        except ImportError as exc:
            raise MissingDependency("Transcription", "transcripts") from exc
        threads = max(1, (os.cpu_count() or 2))
        return WhisperModel(str(self.folder()), device=self.device, compute_type=self.compute_type,
                            cpu_threads=threads)

    def transcribe(self, path: Path) -> Transcript:
        """Whisper over the audio, window by window, with times in the video's seconds."""
        lines: list[TranscriptLine] = []
        language = None
        heard_anything = False
        for offset, audio in audio_windows(path, self.window_seconds):
            if audio.size == 0 or float(np.abs(audio).max(initial=0.0)) < 1e-4:
                continue  # digital silence: nothing for Whisper to hear
            heard_anything = True
            segments, info = self._load().transcribe(audio, word_timestamps=True, vad_filter=True, beam_size=1,
                                                     condition_on_previous_text=False, language=language)
            language = language or info.language
            for segment in segments:  # a lazy generator: iterate once
                text = segment.text.strip()
                if text:
                    words = [Word(start=round(offset + w.start, 3), end=round(offset + w.end, 3), text=w.word.strip())
                             for w in segment.words or []]
                    lines.append(TranscriptLine(start=round(offset + segment.start, 3),
                                                end=round(offset + segment.end, 3), text=text, words=words))
        return Transcript(source=self.label if heard_anything else "none", language=language, lines=lines)


class SubtitlesUnreadable(InputError):
    code = "subtitles_unreadable"
    default_hint = "The speech is transcribed from the audio instead."


def parse_subtitles(path: Path) -> Transcript:
    """WebVTT or SRT cues as transcript lines (tags and entities resolved); rolling
    auto-captions, which repeat a line in the next cue as the next words arrive, are de-duplicated."""
    try:
        import webvtt
        from webvtt.errors import MalformedCaptionError, MalformedFileError
    except ImportError as exc:
        raise MissingDependency("Reading subtitles", "youtube") from exc
    try:
        cues = webvtt.from_srt(str(path)) if path.suffix.lower() == ".srt" else webvtt.read(str(path))
    except (MalformedFileError, MalformedCaptionError, UnicodeDecodeError) as exc:
        raise SubtitlesUnreadable(f"{path.name} is not readable WebVTT or SRT: {exc}") from exc
    lines: list[TranscriptLine] = []
    for cue in cues:
        text = " ".join(html.unescape(line).strip() for line in cue.text.splitlines() if line.strip())
        if text and not (lines and lines[-1].text == text):
            lines.append(TranscriptLine(start=cue.start_time.in_milliseconds() / 1000,
                                        end=cue.end_time.in_milliseconds() / 1000, text=text))
    return Transcript(source="subtitles", lines=lines)


def cached_transcript(video: VideoInfo, transcriber: Transcriber, cache_dir: Path) -> Transcript:
    """The transcript of ``video`` by ``transcriber``'s model, computed once per video and model."""
    key = hashlib.blake2b(f"{video.content_id}|{transcriber.label}".encode(), digest_size=12).hexdigest()
    target = cache_dir / "transcripts" / f"{key}.json"
    if target.is_file():
        try:
            return Transcript.model_validate_json(target.read_text())
        except ValueError:
            pass
    transcript = transcriber.transcribe(video.path)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{uuid.uuid4().hex[:12]}.tmp")
    partial.write_text(transcript.model_dump_json())
    os.replace(partial, target)
    return transcript


def transcriber_for(settings) -> Transcriber:
    """The transcriber the settings name, keeping downloaded models in the cache."""
    return Transcriber(settings.library.whisper_model, cache=settings.cache_dir / "models")


async def speech_of(video: VideoInfo, settings, warn=None) -> list[TranscriptLine] | None:
    """What is said in ``video`` (cached per video and model), or None when there is nothing to hear
    or transcription is off or not installed (``warn`` says which)."""
    if not video.has_audio or not settings.library.transcribe:
        return None
    try:
        transcriber = transcriber_for(settings)
        transcript = await asyncio.to_thread(cached_transcript, video, transcriber, settings.cache_dir)
    except MissingDependency as exc:
        if warn:
            warn(f"speech left out: {exc.message} ({exc.hint})")
        return None
    except Exception as exc:  # e.g. the Whisper model cannot be downloaded: the summary goes on without speech
        if warn:
            warn(f"speech left out: transcription failed ({type(exc).__name__}: {str(exc)[:200]})")
        return None
    return transcript.lines
