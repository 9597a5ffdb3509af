"""Locate the data files shipped with the package (configs/, prompts/, servers/)."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_path(relative: str) -> Path:
    """Path of a shipped data file.

    Wheels carry ``configs/``, ``prompts/`` and ``servers/`` inside the package; an editable install
    reads them from the source tree next to the package.
    """
    for root in (_PACKAGE_DIR, _PACKAGE_DIR.parent):
        candidate = root / relative
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"shipped data file {relative!r} is missing from the installation")
