"""Fetch URLs (YouTube and anything else yt-dlp knows) into the cache, keeping their metadata.

A URL fetched once is not fetched again: a record beside the file maps the URL to it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Callable
from pathlib import Path

from marlin_agent.errors import MissingDependency, PathNotAllowed, SourceUnavailable
from marlin_agent.media.address_guard import ALLOW_HINT, Address, GuardProxy, check_url
from marlin_agent.media.sources import SourceVideo

log = logging.getLogger(__name__)


class _YtDlpLogger:
    """yt-dlp writes to stdout unless given a logger; stdout belongs to --json and MCP."""

    def debug(self, message: str) -> None:
        log.debug(message)

    def info(self, message: str) -> None:
        log.debug(message)

    def warning(self, message: str) -> None:
        log.info(message)

    def error(self, message: str) -> None:
        log.info(message)  # raised to the caller as SourceUnavailable; no need to print it twice


def _ffmpeg_binary() -> str | None:
    """yt-dlp needs an ffmpeg binary to merge separate video and audio streams."""
    try:
        import imageio_ffmpeg
    except ImportError:
        return None
    try:
        return imageio_ffmpeg.get_ffmpeg_exe()
    except RuntimeError:
        return None


def _options(target_stem: Path) -> dict:
    ffmpeg = _ffmpeg_binary()
    options = {
        "outtmpl": f"{target_stem}.%(ext)s",
        "noplaylist": True,
        "quiet": True,
        "no_warnings": True,
        "noprogress": True,
        "logger": _YtDlpLogger(),
        "writesubtitles": True,
        "writeautomaticsub": True,
        "subtitleslangs": ["en", "en.*", "en-orig"],
        "subtitlesformat": "vtt/best",
        "retries": 3,
        "socket_timeout": 30,
    }
    if ffmpeg:
        # Marlin reads at most ~448 px, so anything above 720p is wasted download.
        options.update(format="bv*[height<=720]+ba/b[height<=720]/bv*+ba/b", merge_output_format="mp4",
                       ffmpeg_location=ffmpeg)
    else:
        options["format"] = "b[height<=720]/b"
    return options


def download_url(url: str, cache_dir: Path, forbidden: Callable[[Address], bool] | None = None) -> SourceVideo:
    """The local copy of ``url``, downloading it (with subtitles) if it is not cached yet.

    ``forbidden`` (e.g. ``address_guard.internal``, when the URL came from a caller rather than the
    user): addresses neither the URL nor any request yt-dlp makes for it (redirects, media,
    subtitles) may reach."""
    folder = cache_dir / "downloads"
    key = hashlib.blake2b(url.encode(), digest_size=10).hexdigest()
    record = folder / f"{key}.json"
    if record.is_file():
        cached = SourceVideo.model_validate_json(record.read_text())
        if cached.path.is_file():
            return cached
    try:
        import yt_dlp
    except ImportError as exc:
        raise MissingDependency("Fetching URLs", "youtube") from exc
    folder.mkdir(parents=True, exist_ok=True)
    options = _options(folder / key)
    with contextlib.ExitStack() as stack:
        guard = None
        if forbidden is not None:
            check_url(url, forbidden)
            guard = stack.enter_context(GuardProxy(forbidden))
            options["proxy"] = guard.url
        with yt_dlp.YoutubeDL(options) as downloader:
            try:
                info = downloader.sanitize_info(downloader.extract_info(url, download=True))
            except yt_dlp.utils.DownloadError as exc:
                if guard is not None and guard.refused:
                    raise PathNotAllowed(f"fetching {url} led to a refused address: {guard.refused[0]}",
                                         hint=ALLOW_HINT) from exc
                raise SourceUnavailable(f"could not fetch {url}: {_reason(exc)}") from exc
    downloads = info.get("requested_downloads") or []
    path = Path(downloads[0]["filepath"]) if downloads else None
    if path is None or not path.is_file():
        raise SourceUnavailable(f"{url} was resolved but no video file was downloaded")
    subtitles = next(
        (Path(s["filepath"]) for s in (info.get("requested_subtitles") or {}).values()
         if s.get("filepath") and Path(s["filepath"]).is_file()),
        None,
    )
    video = SourceVideo(path=path, url=url, title=info.get("title"), uploader=info.get("uploader"),
                        external_id=info.get("id"), subtitles=subtitles)
    record.write_text(video.model_dump_json())
    return video


def _reason(exc: Exception) -> str:
    text = str(exc)
    return text.removeprefix("ERROR: ").strip()
