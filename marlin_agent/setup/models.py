"""The small models marlin-agent runs itself: which ones the configuration needs, which are here,
and fetching them all ahead of time for machines that go offline later."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.config import Settings, model_folders_from_environment
from marlin_agent.domain import ChunkProgress
from marlin_agent.errors import MarlinAgentError, ModelUnavailable


class ModelCopy(BaseModel):
    role: str  # embeddings | verification | wordnet | speech
    name: str
    folder: str
    megabytes: float
    calibration: str | None = None  # verification: whose weights it runs with (a fit made here, say)


@dataclass(frozen=True)
class NeededModel:
    role: str
    name: str
    env_var: str
    local: Callable[[], Path | None]  # its folder when it is on this machine; never downloads
    fetch: Callable[[], Path]  # its folder, downloaded first when need be


def needed_models(settings: Settings, speech: bool) -> list[NeededModel]:
    """Every model search, verification and (with ``speech``) transcription will load, in that order."""
    from marlin_agent.library.embeddings import Embedder
    from marlin_agent.library.transcripts import transcriber_for
    from marlin_agent.model_store import local_model
    from marlin_agent.verification.entailment import model_folder
    from marlin_agent.verification.wordnet import resolve_wordnet

    cache = settings.cache_dir / "models"
    embedder = Embedder(settings.library.embed_model, cache)
    verify = settings.verify
    models = [
        NeededModel("embeddings", settings.library.embed_model, "MARLIN_EMBED_MODEL", embedder.local_folder,
                    lambda: Path(embedder.folder())),
        NeededModel("verification", verify.model, "MARLIN_VERIFY_MODEL",
                    lambda: local_model(verify.model, cache, ["config.json", "tokenizer.json", verify.model_file])
                    or _local_onnx_folder(verify.model),
                    lambda: model_folder(verify, settings.cache_dir)),
        NeededModel("wordnet", "WordNet 3.0", "MARLIN_WORDNET",
                    lambda: _local_wordnet(verify.wordnet, settings.cache_dir),
                    lambda: resolve_wordnet(verify.wordnet, settings.cache_dir)),
    ]
    if speech:
        transcriber = transcriber_for(settings)
        models.append(NeededModel("speech", transcriber.model_name, "MARLIN_WHISPER_MODEL", transcriber.local_folder,
                                  lambda: Path(transcriber.folder())))
    return models


def _local_wordnet(configured: str, cache: Path) -> Path | None:
    """WordNet as verification would find it, without downloading (a configured folder that lacks it is missing)."""
    from marlin_agent.verification.wordnet import resolve_wordnet

    try:
        return resolve_wordnet(configured, cache, download=False)
    except ModelUnavailable:
        return None


def _local_onnx_folder(name: str) -> Path | None:
    """A local verification folder holds some .onnx file (its name is free), a tokenizer and a config."""
    folder = Path(name).expanduser()
    ok = folder.is_dir() and (folder / "tokenizer.json").is_file() and any(folder.rglob("*.onnx"))
    return folder if ok else None


def _size_mb(folder: Path) -> float:
    return round(sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6, 1) if folder.is_dir() else 0.0


def pull_models(settings: Settings, speech: bool = True, on_fit: ChunkProgress | None = None) -> list[ModelCopy]:
    """Every needed model, found in the cache or downloaded into it now. Each is tried; when any
    cannot be had, the error names every one that is missing and why, and which did arrive. An entailment
    model with no fitted table is then fitted here (``on_fit``: its progress) and the copy says so."""
    copies, missing = [], []
    for model in needed_models(settings, speech):
        try:
            folder = model.fetch()
        except MarlinAgentError as exc:
            missing.append((model, exc))
            continue
        copies.append(ModelCopy(role=model.role, name=model.name, folder=str(folder), megabytes=_size_mb(folder)))
    if missing:
        why = "; ".join(f"{model.role} ({model.name}): {exc.message}" for model, exc in missing)
        have = f" The others are in place: {', '.join(c.role for c in copies)}." if copies else ""
        raise ModelUnavailable(
            f"{len(missing)} of {len(copies) + len(missing)} models could not be fetched. {why}.{have}",
            hint="Connect to the model hub (huggingface.co) and run this again, or point "
                 f"{', '.join(model.env_var for model, _ in missing)} at local copies.")
    return [copy.model_copy(update={"calibration": _calibrated(settings, on_fit)}) if copy.role == "verification"
            else copy for copy in copies]


def record_model_folders(settings: Settings) -> dict[str, str]:
    """The model folders this environment names (``MARLIN_EMBED_MODEL`` ...), written into the user's config
    file so that every front door loads the same models, also one started without this shell's environment;
    {"library.embed_model": folder, ...}."""
    from marlin_agent.setup import user_config

    found = model_folders_from_environment()
    if found:
        user_config.update(settings.user_config_path, found)
    return {f"{section}.{key}": folder for section, keys in found.items() for key, folder in keys.items()}


def _calibrated(settings: Settings, on_fit: ChunkProgress | None) -> str:
    """Which weights verification will use, fitting them here first when the model has none but priors."""
    from marlin_agent.library.embeddings import shared_embedder
    from marlin_agent.verification.calibration_set import ensure_fitted

    def embed():
        return shared_embedder(settings.library.embed_model, settings.cache_dir / "models", settings.graphs_dir)

    return ensure_fitted(settings, embed, on_fit).describe()
