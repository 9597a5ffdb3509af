"""Turn what the storage layer raises into errors a user can act on.

LanceDB reports a full disk and a damaged file alike, as an exception whose text is a Rust
error chain. Both front doors must say which it is, where, and what to do: ``disk_full`` with
the free and the needed space, or ``index_damaged`` naming the table and pointing at repair.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from marlin_agent.errors import IndexDamaged, MarlinAgentError
from marlin_agent.media.disk_space import disk_full, is_disk_full

T = TypeVar("T")
_STORAGE_ERRORS: tuple[type[BaseException], ...] = (OSError, RuntimeError, ValueError)


def translated(exc: BaseException, uri: str, action: str) -> MarlinAgentError | None:
    """The user's error for a storage failure of the local index at ``uri``; None when it is not one."""
    if isinstance(exc, MarlinAgentError) or not isinstance(exc, _STORAGE_ERRORS) or "://" in uri:
        return None
    place = Path(uri)
    if is_disk_full(exc, place):
        return disk_full(place, action)
    return IndexDamaged(f"the index at {uri} could not be read while {action}: {reason(exc)}")


def reason(exc: BaseException) -> str:
    """The first line of a storage error, without the Rust source line it ends with (of no use to a reader)."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return re.sub(r",? /\S+\.rs:\d+:\d+", "", text)[:300]


def storage_errors(action: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorate a ``Library`` method so that storage failures come out as ``disk_full`` or ``index_damaged``."""

    def wrap(method: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(method)
        def guarded(self, *args, **kwargs) -> T:
            try:
                return method(self, *args, **kwargs)
            except _STORAGE_ERRORS as exc:
                error = translated(exc, self.uri, action)
                if error is None:
                    raise
                raise error from exc

        return guarded

    return wrap
