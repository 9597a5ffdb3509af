"""Transcription speed: × realtime of Whisper base (int8, CPU) on continuous speech."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from evals.synthetic.footage import FootageSpec, SpeechLine, make_video
from evals.synthetic.offline_models import whisper_base_dir
from marlin_agent.library.transcripts import Transcriber

SENTENCES = [
    "The home team pushes forward down the left wing.",
    "A long pass finds the striker just outside the box.",
    "He shoots, and the keeper tips it over the bar.",
    "The corner is cleared and the visitors break quickly.",
    "The referee checks his watch as the crowd grows louder.",
]


def run(seconds: int = 120) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        speech = [SpeechLine(text=SENTENCES[n % len(SENTENCES)], start=n * 4.0) for n in range(int(seconds / 4) - 1)]
        video = make_video(Path(scratch) / "talk.mp4", FootageSpec(duration=seconds, width=160, height=120, fps=2,
                                                                    speech=speech))
        transcriber = Transcriber(str(whisper_base_dir(Path(scratch))))
        transcriber._load()  # time the transcription, not the model load
        started = time.perf_counter()
        transcript = transcriber.transcribe(video)
        elapsed = time.perf_counter() - started
    return {"model": "whisper base, int8, CPU", "audio_seconds": seconds, "seconds": round(elapsed, 1),
            "x_realtime": round(seconds / elapsed, 1), "lines": len(transcript.lines)}


if __name__ == "__main__":
    print(run())
