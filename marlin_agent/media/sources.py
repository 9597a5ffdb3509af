"""Turn what a user names (files, folders, URLs) into a list of local videos to work on."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.domain import FilePath
from marlin_agent.errors import MarlinAgentError, NoVideosFound, PathNotAllowed, VideoNotFound
from marlin_agent.file_names import escaped

VIDEO_EXTENSIONS = frozenset({
    ".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi", ".wmv", ".flv", ".mpg", ".mpeg",
    ".ts", ".mts", ".m2ts", ".3gp", ".ogv",
})


class SourceVideo(BaseModel):
    """A video on local disk, with what is known of where it came from."""

    path: FilePath
    url: str | None = None
    title: str | None = None
    uploader: str | None = None
    external_id: str | None = None
    subtitles: FilePath | None = None


class SkippedSource(BaseModel):
    source: str
    code: str
    reason: str

    def model_post_init(self, context) -> None:
        # Names that are not UTF-8 reach here raw (from a folder walk or an error message): spell them out.
        self.source, self.reason = escaped(self.source), escaped(self.reason)


@dataclass
class ResolvedSources:
    videos: list[SourceVideo] = field(default_factory=list)
    skipped: list[SkippedSource] = field(default_factory=list)


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def _inside(path: Path, within: list[Path] | None) -> bool:
    return within is None or any(path == root or path.is_relative_to(root) for root in within)


def walk_videos(folder: Path, skipped: list[SkippedSource], within: list[Path] | None = None) -> list[Path]:
    """Video files below ``folder``, following symlinks without looping; with ``within``, none whose
    real place is outside those folders (each link that leads out is reported, and not followed)."""
    found: list[Path] = []
    seen_dirs: set[Path] = set()

    def on_error(error: OSError) -> None:
        skipped.append(SkippedSource(source=str(error.filename), code="unreadable",
                                     reason=error.strerror or str(error)))

    def leads_out(path: Path, real: Path) -> bool:
        if _inside(real, within):
            return False
        skipped.append(SkippedSource(source=str(path), code=PathNotAllowed.code,
                                     reason=f"a link to {real}, outside the allowed folders"))
        return True

    for root, dirs, files in os.walk(folder, followlinks=True, onerror=on_error):
        real = Path(root).resolve()
        if real in seen_dirs:
            dirs[:] = []
            continue
        seen_dirs.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and not leads_out(Path(root) / d, (Path(root) / d).resolve()))
        for name in sorted(files):
            if name.startswith(".") or Path(name).suffix.lower() not in VIDEO_EXTENSIONS:
                continue
            path = Path(root) / name
            if not path.exists():
                skipped.append(SkippedSource(source=str(path), code="broken_link", reason="a symlink to nothing"))
            elif leads_out(path, path.resolve()):
                continue
            elif not os.access(path, os.R_OK):
                skipped.append(SkippedSource(source=str(path), code="unreadable", reason="permission denied"))
            else:
                found.append(path)
    return found


def resolve_sources(inputs: list[str], download=None, within: list[Path] | None = None) -> ResolvedSources:
    """Files, folders (recursive) and URLs to local videos; what cannot be used is listed, not fatal.

    ``download`` turns a URL into a :class:`SourceVideo` (see ``media.download``); folders
    yield only files with a video extension, while a file named directly is always tried.
    With ``within``, every file must really lie inside one of those folders, symlinks resolved:
    a front door that confines its callers (the MCP server) passes its roots.
    """
    resolved = ResolvedSources()
    seen: set[Path] = set()
    within = [Path(w).expanduser().resolve() for w in within] if within else None

    def add(video: SourceVideo) -> None:
        real = video.path.resolve()
        if not _inside(real, within) and not video.url:
            resolved.skipped.append(SkippedSource(source=str(video.path), code=PathNotAllowed.code,
                                                  reason=f"it is {real}, outside the allowed folders"))
        elif real not in seen:
            seen.add(real)
            resolved.videos.append(video)

    for item in inputs:
        if is_url(item):
            if download is None:
                raise ValueError("URLs need a downloader")
            try:
                add(download(item))
            except MarlinAgentError as exc:
                resolved.skipped.append(SkippedSource(source=item, code=exc.code, reason=exc.message))
            continue
        path = Path(item).expanduser()
        if path.is_dir():
            for found in walk_videos(path, resolved.skipped, within):
                add(SourceVideo(path=found.absolute()))
        elif path.exists():
            add(SourceVideo(path=path.absolute()))
        else:
            resolved.skipped.append(SkippedSource(source=item, code=VideoNotFound.code,
                                                  reason=f"no such file or folder: {path}"))
    return resolved


def require_videos(resolved: ResolvedSources, inputs: list[str]) -> None:
    if not resolved.videos:
        reasons = "; ".join(f"{s.source}: {s.reason}" for s in resolved.skipped[:3])
        raise NoVideosFound(f"no videos found in {', '.join(inputs)}" + (f" ({reasons})" if reasons else ""))
