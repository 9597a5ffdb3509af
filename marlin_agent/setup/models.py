"""Fetch the models marlin-agent runs itself ahead of time, for machines that go offline later."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from marlin_agent.config import Settings


class ModelCopy(BaseModel):
    role: str  # embeddings | verification | wordnet | speech
    name: str
    folder: str
    megabytes: float


def _size_mb(folder: Path) -> float:
    return round(sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6, 1) if folder.is_dir() else 0.0


def pull_models(settings: Settings, speech: bool = True) -> list[ModelCopy]:
    """Every model the library, verification and (with ``speech``) transcription will use, found in
    the cache or downloaded into it now; the first that cannot be had stops with ModelUnavailable."""
    from marlin_agent.library.embeddings import Embedder
    from marlin_agent.library.transcripts import Transcriber
    from marlin_agent.verification.entailment import model_folder
    from marlin_agent.verification.wordnet import resolve_wordnet

    cache = settings.cache_dir / "models"
    found = [("embeddings", settings.library.embed_model, Path(Embedder(settings.library.embed_model, cache).folder())),
             ("verification", settings.verify.model, model_folder(settings.verify, settings.cache_dir)),
             ("wordnet", "WordNet 3.0", resolve_wordnet(settings.verify.wordnet, settings.cache_dir))]
    if speech:
        transcriber = Transcriber(settings.library.whisper_model, cache=cache)
        found.append(("speech", transcriber.model_name, Path(transcriber.folder())))
    return [ModelCopy(role=role, name=name, folder=str(folder), megabytes=_size_mb(folder))
            for role, name, folder in found]
