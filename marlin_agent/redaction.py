"""One redaction for every text that leaves the process.

Secrets enter in few places: the keys of the settings, and each ``${NAME}`` filled in from
credentials.toml or the environment (``config.expand_secrets``). Each is remembered here as it
enters, and every text that goes out — an error's message and hint, a progress line, a JSON
document, a record stored or logged — is passed through ``redact``, which writes each remembered
value back as the name it came from (``${NAME}``) or as ``***``. A failure path cannot leak what
its message happens to quote (FFmpeg names the whole address it could not open, a timed-out
command its whole argument list), because nothing that leaves skips this one function.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from typing import TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_SHORTEST = 3  # shorter values are not secrets worth the name, and replacing them would garble every text
_known: dict[str, str] = {}  # a secret's value (and its spellings in a URL) -> what is shown instead
_lock = threading.Lock()


def remember(value: str | None, name: str | None = None) -> None:
    """Keep ``value`` out of everything that leaves from now on; shown as ``${name}``, else ``***``."""
    if not value or len(value) < _SHORTEST:
        return
    shown = "${" + name + "}" if name else "***"
    with _lock:
        # In an address it may stand percent-encoded (a password with '@' or '/' must be), in JSON escaped.
        for spelling in {value, urllib.parse.quote(value, safe=""), urllib.parse.quote(value), json.dumps(value)[1:-1]}:
            _known.setdefault(spelling, shown)


def redact(text: str, extra: list[str] | None = None) -> str:
    """``text`` with every remembered secret (and each of ``extra``) replaced by what stands for it."""
    for value in extra or ():
        remember(value)
    if not _known or not text:
        return text
    with _lock:
        known = sorted(_known.items(), key=lambda item: -len(item[0]))  # a longer secret before a part of it
    for value, shown in known:
        if value in text:
            text = text.replace(value, shown)
    return text



def redacted(record: M) -> M:
    """``record`` with no remembered secret in any of its texts."""
    return type(record).model_validate_json(redact(record.model_dump_json()))
