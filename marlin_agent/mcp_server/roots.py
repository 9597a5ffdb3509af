"""Confine a front door to the folders the user allowed.

Another agent drives the MCP server, so every path it names is checked against the roots
the user configured before anything reads or writes it; symlinks are resolved first so a
link inside a root cannot lead outside it.
"""

from __future__ import annotations

from pathlib import Path

from marlin_agent.errors import PathNotAllowed
from marlin_agent.file_names import text_path
from marlin_agent.media.address_guard import check_url


def is_url(item: str) -> bool:
    return item.startswith(("http://", "https://"))


class PathGuard:
    def __init__(self, roots: list[str | Path], allow_urls: bool = True, allow_private_urls: bool = False) -> None:
        if not roots:
            raise ValueError("at least one root is needed")
        self.roots = [Path(r).expanduser().resolve() for r in roots]
        self.allow_urls, self.allow_private_urls = allow_urls, allow_private_urls

    def _inside(self, path: Path) -> bool:
        return any(path == root or path.is_relative_to(root) for root in self.roots)

    def path(self, item: str | Path) -> Path:
        """``item`` as an absolute path inside a root; relative paths are taken from the first root."""
        raw = Path(str(item)).expanduser()
        path = (raw if raw.is_absolute() else self.roots[0] / raw).resolve()
        if not self._inside(path):
            raise PathNotAllowed(f"{item} is outside the allowed roots ({', '.join(map(str, self.roots))})")
        return path

    def source(self, item: str) -> str:
        """A file, folder or URL the caller may index or ask about."""
        if is_url(item):
            if not self.allow_urls:
                raise PathNotAllowed(f"URLs are not allowed here: {item}",
                                     hint="Set [mcp] allow_urls = true in the config to let tools fetch URLs.")
            if not self.allow_private_urls:
                check_url(item)  # before any work; the fetch itself is guarded again, redirects included
            return item
        return str(self.path(item))

    def sources(self, items: list[str]) -> list[str]:
        return [self.source(item) for item in items]

    def visible(self, path: str, url: str = "") -> bool:
        """Whether a library entry may be shown: a file inside the roots, or fetched from a URL."""
        if url:
            return self.allow_urls
        return self._inside(text_path(path).resolve())
