"""What installed packages add: the objects named by the entry points of one group.

Each extension point (alert targets, stores) names its group and registers its built-ins itself; a
package adds to it by declaring an entry point in that group. One that cannot be loaded, or that takes
a name already in use, is named in a warning and left out: a broken plugin must not stop a run that
does not use it.
"""

from __future__ import annotations

import warnings
from typing import Any


def added(group: str, what: str, taken: set[str] = frozenset(), kind: type | None = None) -> dict[str, Any]:
    """The objects the group's entry points name, by entry point name (sorted); ``what`` names them in warnings,
    ``taken`` are names a package may not use, ``kind`` the type each must be (when the group wants instances)."""
    from importlib.metadata import entry_points

    found: dict[str, Any] = {}
    for point in sorted(entry_points(group=group), key=lambda p: p.name):
        package = point.dist.name if point.dist is not None else "an installed package"
        if point.name in taken or point.name in found:
            warnings.warn(f"the {what} {point.name!r} of {package} is left out: the name is taken", stacklevel=3)
            continue
        try:
            loaded = point.load()
        except Exception as exc:  # noqa: BLE001 - a plugin's own failure, reported and passed over
            warnings.warn(f"the {what} {point.name!r} of {package} is left out: {exc}", stacklevel=3)
            continue
        if kind is not None and not isinstance(loaded, kind):
            warnings.warn(f"the {what} {point.name!r} of {package} is left out: it is not a {kind.__name__}",
                          stacklevel=3)
            continue
        found[point.name] = loaded
    return found
