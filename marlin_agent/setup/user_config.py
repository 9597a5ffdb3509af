"""Write the user's settings: ``$MARLIN_HOME/config.toml``, and keys in ``credentials.toml``.

Only ``setup`` writes here. Keys go to their own file, created with user-only permissions
before anything is written into it, so config.toml can be shared or pasted into a bug
report without leaking them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import tomlkit


def update(path: Path, changes: dict[str, dict[str, Any]], private: bool = False) -> Path:
    """Merge ``changes`` into the TOML file at ``path``; a ``None`` value removes that key.

    The file is edited in place (tomlkit keeps its comments, order and formatting): it is the
    user's file, and ``setup`` only changes the keys it was asked to.
    """
    document = tomlkit.parse(path.read_text()) if path.is_file() else tomlkit.document()
    for section, values in changes.items():
        if section not in document:
            document.add(section, tomlkit.table())
        table = document[section]
        for key, value in values.items():
            if value is None:
                table.pop(key, None)
            else:
                table[key] = value
        if not table:
            del document[section]
    path.parent.mkdir(parents=True, exist_ok=True)
    text = tomlkit.dumps(document)
    if private:
        # Create it 0600 first, so the key is never readable by others, not even for a moment.
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(descriptor, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
    else:
        path.write_text(text)
    return path
