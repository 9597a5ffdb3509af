"""Where the package's imports sit: at the top of a module, or inside a function (deferred to its first call).

An import inside a function buys start-up time only when loading its module does not load the same thing
anyway. ``wasted_deferrals`` finds the ones that buy nothing: the module they sit in already loads what they
import, through its own top-level imports or those of the modules it loads (read statically, with the
parents of every module; imports under ``if TYPE_CHECKING`` run never and count for nothing).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _named(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The modules an import statement loads: the one it names, and each name from it that is a module."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
    return [base] + [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING"


def _top_level(body: list[ast.stmt]):
    """The import statements a module runs when it loads (inside ``if``, ``try`` and ``with`` too)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and not _type_checking(node):
            yield from _top_level(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body + node.orelse + [s for h in node.handlers for s in h.body])
        elif isinstance(node, ast.With):
            yield from _top_level(node.body)


def wasted_deferrals(package: Path) -> list[str]:
    """"module:line imports X" for each import inside a function whose module loads X at its own load anyway."""
    paths = {_module_name(path, package): path for path in package.rglob("*.py")}
    known = set(paths)
    loads: dict[str, set[str]] = {}
    deferred: dict[str, list[tuple[int, list[str]]]] = defaultdict(list)
    for module, path in paths.items():
        tree, is_package = ast.parse(path.read_text(encoding="utf-8")), path.name == "__init__.py"
        parents = {".".join(module.split(".")[:n]) for n in range(1, module.count(".") + 1)}
        loads[module] = parents | {name for node in _top_level(tree.body)
                                   for name in _named(node, module, is_package, known)}
        for function in ast.walk(tree):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                deferred[module] += [(node.lineno, _named(node, module, is_package, known))
                                     for node in ast.walk(function) if isinstance(node, ast.Import | ast.ImportFrom)]
    found = []
    for module, imports in sorted(deferred.items()):
        loaded, stack = set(), [module]
        while stack:
            name = stack.pop()
            if name not in loaded:
                loaded.add(name)
                stack += loads.get(name, ())
        found += [f"{module}:{line} imports {', '.join(names)}" for line, names in sorted(set(
            (line, tuple(names)) for line, names in imports)) if all(name in loaded for name in names)]
    return found
