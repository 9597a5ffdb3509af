"""The staged-clip cache, kept to a size: least recently used clips go first.

Every chunk sent to Marlin is staged as a small H.264 clip under ``cache/clips``, and reused
when the same window is asked about again. Without a limit the cache grows with every video,
so a run ends by pruning it to ``[media] clip_cache_gb``. A clip's sidecar (``.json``) is
touched whenever the clip is used, so its modification time says when it was last needed.
Clips used in the last few minutes are never removed: another run may be sending them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.domain import SCHEMA_VERSION, SchemaVersion

_GB = 1024**3
# Clips needed this recently may belong to a run still going: they stay, whatever the limit.
IN_USE_SECONDS = 15 * 60


class PruneReport(BaseModel):
    schema_version: SchemaVersion = SCHEMA_VERSION
    folder: str
    limit_gb: float | None
    clips_removed: int = 0
    freed_mb: float = 0.0
    kept_clips: int = 0
    kept_mb: float = 0.0
    leftovers_removed: int = 0  # half-written clips and sidecars a killed run left behind


def touch(sidecar: Path) -> None:
    """Mark a clip as just used (best effort: a read-only cache is only never pruned)."""
    try:
        os.utime(sidecar)
    except OSError:
        pass


def _clips(folder: Path) -> list[tuple[float, int, Path, Path]]:
    """(last used, bytes, clip, sidecar) of every staged clip below ``folder``."""
    found = []
    for sidecar in folder.glob("*/*.json"):
        clip = sidecar.with_suffix(".mp4")
        try:
            used, size = sidecar.stat().st_mtime, clip.stat().st_size + sidecar.stat().st_size
        except OSError:
            continue
        found.append((used, size, clip, sidecar))
    return found


def _leftovers(folder: Path, before: float) -> tuple[int, int]:
    """Remove what a killed run was writing (``*.partial.mp4``, a sidecar's ``*.tmp``) and no run has touched
    since ``before``; how many, and their bytes."""
    removed = freed = 0
    if not folder.is_dir():
        return removed, freed
    for leftover in [*folder.glob("*/*.partial.mp4"), *folder.glob("*/*.tmp")]:
        try:
            found = leftover.stat()
            if found.st_mtime >= before:
                continue  # a run may be writing it now
            leftover.unlink()
        except OSError:
            continue
        removed, freed = removed + 1, freed + found.st_size
    return removed, freed


def prune(cache_dir: Path, limit_gb: float | None, now: float | None = None) -> PruneReport:
    """Remove the least recently used clips until the cache holds at most ``limit_gb`` (None: no limit), and
    what killed runs left half-written."""
    folder = cache_dir / "clips"
    report = PruneReport(folder=str(folder), limit_gb=limit_gb)
    clips = sorted(_clips(folder)) if folder.is_dir() else []
    total = sum(size for _, size, _, _ in clips)
    limit = float("inf") if limit_gb is None else limit_gb * _GB
    recent = (now or time.time()) - IN_USE_SECONDS
    for used, size, clip, sidecar in clips:
        if total <= limit or used >= recent:
            break
        sidecar.unlink(missing_ok=True)  # first the mark of a complete clip, then the clip
        clip.unlink(missing_ok=True)
        total -= size
        report.clips_removed += 1
        report.freed_mb += size / 1024**2
    for parent in {clip.parent for _, _, clip, _ in clips}:
        try:
            parent.rmdir()  # only when the video has no clips left
        except OSError:
            pass
    report.leftovers_removed, freed = _leftovers(folder, recent)
    report.freed_mb += freed / 1024**2
    report.kept_clips = len(clips) - report.clips_removed
    report.kept_mb, report.freed_mb = round(total / 1024**2, 2), round(report.freed_mb, 2)
    return report
