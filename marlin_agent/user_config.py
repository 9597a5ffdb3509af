"""Write the user's settings: ``$MARLIN_HOME/config.toml``, and keys in ``credentials.toml``.

Only ``setup`` writes here. Keys go to their own file, created with user-only permissions
before anything is written into it, so config.toml can be shared or pasted into a bug
report without leaking them.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return json.dumps(str(value))  # a TOML basic string: JSON's escapes are valid TOML


def dumps(data: dict[str, dict[str, Any]]) -> str:
    """Tables of scalars and lists (nested tables one level down) as TOML text."""
    lines: list[str] = []
    for section, values in data.items():
        flat = {k: v for k, v in values.items() if not isinstance(v, dict)}
        nested = {k: v for k, v in values.items() if isinstance(v, dict)}
        lines.append(f"[{section}]")
        lines += [f"{key} = {_value(value)}" for key, value in flat.items() if value is not None]
        for name, table in nested.items():
            lines.append(f"\n[{section}.{name}]")
            lines += [f"{key} = {_value(value)}" for key, value in table.items() if value is not None]
        lines.append("")
    return "\n".join(lines)


def _load(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text()) if path.is_file() else {}


def update(path: Path, changes: dict[str, dict[str, Any]], private: bool = False) -> Path:
    """Merge ``changes`` into the TOML file at ``path``; a ``None`` value removes that key."""
    data = _load(path)
    for section, values in changes.items():
        table = data.setdefault(section, {})
        for key, value in values.items():
            if value is None:
                table.pop(key, None)
            else:
                table[key] = value
        if not table:
            data.pop(section)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dumps(data)
    if private:
        # Create it 0600 first, so the key is never readable by others, not even for a moment.
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(descriptor, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
    else:
        path.write_text(text)
    return path
