"""The small models marlin-agent runs itself (embeddings, verification, Whisper), found or fetched once.

A name that is a local folder is used as it is. A hub name is looked for in the cache first,
then downloaded into it (only the files that are needed, with the hub client's progress bars
on stderr) and never again. With no hub to reach and nothing cached, the error comes in
seconds and says which model, where the cache is, and which variable points at a local copy.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from marlin_agent.errors import MissingDependency, ModelUnavailable

# How long to wait for the hub to answer before calling it unreachable (its own default
# retries a dead network for minutes).
HUB_TIMEOUT_SECONDS = 5.0


def cached_folder(name: str, cache: Path) -> Path:
    """Where a hub model lives in ``cache``."""
    return cache / name.replace("/", "--")


def is_complete(folder: Path, files: Iterable[str]) -> bool:
    """Every required file is there; a name with ``*`` wants at least one match."""
    for name in files:
        if "*" in name:
            if not any(folder.glob(name)):
                return False
        elif not (folder / name).is_file():
            return False
    return True


def local_model(name: str, cache: Path, required: list[str]) -> Path | None:
    """The model's folder when it is already on this machine (a local folder, or complete in the
    cache); None when using it would mean a download."""
    local = Path(name).expanduser()
    if local.is_dir():
        return local
    target = cached_folder(name, cache)
    return target if not name.startswith(("/", ".", "~")) and is_complete(target, required) else None


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """What says a file is still the one that was loaded: inode, size, modification time."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def download_failure(exc: BaseException) -> str:
    """Why a download failed, in words (never an exception's class name)."""
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status in (401, 403, 404):
        return f"the model hub has no public model by that name (HTTP {status})"
    if status is not None:
        return f"the model hub answered HTTP {status}"
    name = type(exc).__name__
    if name in ("LocalEntryNotFoundError", "OfflineModeIsEnabled") or "offline" in str(exc).lower():
        return "the model hub cannot be reached (offline, or HF_HUB_OFFLINE is set)"
    if isinstance(exc, (ConnectionError, TimeoutError)) or "connect" in name.lower() or "timeout" in name.lower():
        return "the model hub cannot be reached (no connection)"
    if isinstance(exc, OSError) and exc.strerror:
        return f"the download could not be written ({exc.strerror})"
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else "the download failed"


def resolve_model(name: str, cache: Path, required: list[str], optional: list[str] = (), *, what: str,
                  env_var: str) -> Path:
    """The folder holding model ``name``: a local folder as it is, else the cached (or just downloaded) copy.

    ``required`` files must arrive; ``optional`` ones are fetched when the model has them."""
    local = Path(name).expanduser()
    if local.is_dir():
        return local
    if name.startswith(("/", ".", "~")):
        raise ModelUnavailable(f"the {what} folder {name} does not exist", hint=f"Check {env_var}.")
    target = cached_folder(name, cache)
    if is_complete(target, required):
        return target
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    except ImportError as exc:
        raise MissingDependency(f"Downloading the {what}", "library") from exc

    def unavailable(why: str) -> ModelUnavailable:
        return ModelUnavailable(
            f"the {what} {name} is not in the cache ({target}) and {why}",
            hint=f"While connected, `marlin-agent models pull` fetches every model at once; or set {env_var} "
                 f"to a local copy of the model folder.")

    try:
        snapshot_download(name, local_dir=target, allow_patterns=[*required, *optional],
                          etag_timeout=HUB_TIMEOUT_SECONDS)
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError, ValueError) as exc:
        raise unavailable(f"could not be downloaded: {download_failure(exc)}") from exc
    if not is_complete(target, required):
        raise unavailable(f"its hub repository lacks {', '.join(required)}")
    return target
