"""The shape of the package, as ARCHITECTURE.md describes it: checked, not hoped for."""

from __future__ import annotations

import importlib.metadata
import json
import os
import pkgutil
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest
from packaging.requirements import Requirement

import marlin_agent

ROOT = Path(__file__).resolve().parents[1]

# Code paths that reach these extras do so lazily and raise MissingDependency with the
# install hint when they are absent (no speech, no URLs, no contact sheet, the pipeline
# planner instead of an LLM): any feature may use them without requiring them.
OPTIONAL_EXTRAS = {"transcripts", "youtube", "sheet", "planner"}

# What each extra promises to make work on its own (with the core dependencies).
EXTRA_ENTRY_POINTS = {
    "library": ["marlin_agent.indexing.run", "marlin_agent.app.search", "marlin_agent.app.ask"],
    "extract": ["marlin_agent.extraction.job"],
    "mcp": ["marlin_agent.mcp_server"],
    "planner": ["marlin_agent.planners.llm"],
    "ray": ["marlin_agent.scale.ray_jobs"],
}


def _modules() -> list[str]:
    return ["marlin_agent"] + [m.name for m in pkgutil.walk_packages(marlin_agent.__path__, "marlin_agent.")]


def test_every_module_imports_on_its_own_in_a_fresh_interpreter():
    modules = _modules()
    # The third-party modules the package reaches, found in one fresh interpreter that imports it all.
    listing = ("import importlib, sys; names = sys.argv[1:]; [importlib.import_module(n) for n in names]; "
               "std = sys.stdlib_module_names; print('\\n'.join(m for m in list(sys.modules) "
               "if m.split('.')[0] not in std and not m.startswith(('marlin_agent', '_'))))")
    third_party = subprocess.run([sys.executable, "-c", listing, *modules], capture_output=True, text=True,
                                 check=True, cwd=ROOT).stdout
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "import_each_alone.py"), *modules], input=third_party,
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    outcomes = json.loads(run.stdout)
    assert len(outcomes) == len(modules) > 60
    assert {name: error for name, error in outcomes.items() if error} == {}


def test_a_module_that_needs_another_imported_first_is_caught(tmp_path):
    """The check above must fail for the mistake it exists for."""
    package = tmp_path / "leaning"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text("import leaning.helper\nVALUE = leaning.helper.X\n")
    (package / "helper.py").write_text("X = 1\n")
    (package / "user.py").write_text("import leaning\nVALUE = leaning.base.VALUE\n")  # relies on base being loaded
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "import_each_alone.py"), "leaning.base", "leaning.user"],
                         input="", capture_output=True, text=True, cwd=tmp_path, check=True,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)})
    outcomes = json.loads(run.stdout)
    assert outcomes["leaning.base"] == "" and "has no attribute 'base'" in outcomes["leaning.user"]


def test_importing_the_package_or_the_cli_loads_no_heavy_dependency():
    probe = ("import sys, marlin_agent, marlin_agent.cli.main; "
             "print(sorted(m for m in ('lancedb', 'torch', 'onnxruntime', 'pydantic_ai', 'mcp', 'faster_whisper') "
             "if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert loaded.stdout.strip() == "[]"


def test_an_import_is_deferred_into_a_function_only_where_it_saves_loading_something():
    """A function-level import that its module loads at start anyway saves nothing and hides a dependency: it
    belongs at the top. (Deferred imports that do save something, an extra or a heavy module a front door need
    not load, stay where they are.)"""
    from tests.import_placement import wasted_deferrals

    assert wasted_deferrals(Path(marlin_agent.__file__).parent) == []


def test_the_import_contracts_hold():
    """Layers point one way, the planners stay independent, and no sibling modules form a cycle."""
    lint_imports = Path(sys.executable).with_name("lint-imports")  # the command .ci/run runs too
    run = subprocess.run([str(lint_imports), "--no-cache"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "BROKEN" not in run.stdout and " KEPT" in run.stdout


def test_the_code_passes_the_projects_lint_rules():
    """pycodestyle, pyflakes, import order, bugbear and complexity at most 12 ([tool.ruff.lint])."""
    ruff = Path(sys.executable).with_name("ruff")
    run = subprocess.run([str(ruff), "check", "--no-cache", "--output-format", "concise", "."], capture_output=True,
                         text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


def test_no_function_in_the_package_is_longer_than_a_screen():
    """Sixty lines: a function a reader can hold at once."""
    import ast

    long = [f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path in sorted((ROOT / "marlin_agent").rglob("*.py"))
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 60]
    assert long == []


def test_test_files_share_helpers_through_support_modules_not_through_each_other():
    """A test file imported by another runs its module-level code twice and ties the two together."""
    leaning = [f"{path.name}: {line.strip()}" for path in sorted((ROOT / "tests").glob("test_*.py"))
               for line in path.read_text().splitlines()
               if re.match(r"\s*from (\.|tests\.)test_\w+ import", line)]
    assert leaning == []


def _extras() -> tuple[list[Requirement], dict[str, list[Requirement]]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return ([Requirement(r) for r in project["dependencies"]],
            {name: [Requirement(r) for r in reqs] for name, reqs in project["optional-dependencies"].items()})


def _distributions(requirements: list[Requirement], extras: dict[str, list[Requirement]]) -> set[str]:
    """Every distribution ``requirements`` install, following our own extras and installed metadata."""
    seen: set[str] = set()
    todo = list(requirements)
    while todo:
        requirement = todo.pop()
        name = _normal(requirement.name)
        if name == "marlin-agent":
            for extra in requirement.extras:
                todo += extras[extra]
            continue
        key = f"{name}[{','.join(sorted(requirement.extras))}]"
        if key in seen:
            continue
        seen |= {key, name}
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for line in requires:
            dependency = Requirement(line)
            marker = dependency.marker
            if marker is None or any(marker.evaluate({"extra": e}) for e in requirement.extras or {""}):
                todo.append(dependency)
    return {s for s in seen if "[" not in s}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.mark.parametrize("extra", sorted(EXTRA_ENTRY_POINTS))
def test_each_extra_installs_everything_its_code_imports(extra):
    core, extras = _extras()
    # An optional extra lends its own packages, not the extras it pulls in itself.
    optional = [r for o in OPTIONAL_EXTRAS for r in extras[o] if _normal(r.name) != "marlin-agent"]
    allowed = _distributions(core + extras[extra] + optional, extras)
    graph = grimp.build_graph("marlin_agent", include_external_packages=True)
    providers = importlib.metadata.packages_distributions()
    missing: dict[str, list[str]] = {}
    for entry in EXTRA_ENTRY_POINTS[extra]:
        for module in graph.find_upstream_modules(entry) | {entry}:
            if module.startswith("marlin_agent") or module in sys.stdlib_module_names:
                continue
            dists = {_normal(d) for d in providers.get(module, [module])}
            if not dists & allowed:
                missing.setdefault(module, []).append(entry)
    assert missing == {}, f"[{extra}] does not install what these import: {missing}"


def test_architecture_md_and_the_readme_name_every_package_and_root_module():
    architecture = (ROOT / "ARCHITECTURE.md").read_text()
    readme = (ROOT / "README.md").read_text()
    package = ROOT / "marlin_agent"
    names = [f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").is_file()]
    names += [p.name for p in package.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(names) > 15
    assert [n for n in names if f"`{n}`" not in architecture and f"`{n}" not in architecture] == []
    assert [n for n in names if n not in readme] == []


def test_no_module_of_the_package_imports_torch():
    """torch is a multi-GB install: the engine's own environment has it, the package never needs it
    (the CPU engine's server is a script in servers/, run by that environment)."""
    graph = grimp.build_graph("marlin_agent", include_external_packages=True)
    assert "torch" not in graph.modules


def test_the_readme_lists_every_error_code_with_its_exit_status():
    import inspect

    import marlin_agent.errors as errors

    rows = dict(re.findall(r"^\| `([a-z_]+)` \| (\d) \|", (ROOT / "README.md").read_text(), flags=re.MULTILINE))
    codes = {cls.code: cls.exit_code for _, cls in inspect.getmembers(errors, inspect.isclass)
             if issubclass(cls, errors.MarlinAgentError) and cls is not errors.MarlinAgentError}
    assert {code: str(status) for code, status in codes.items()} == {code: rows.get(code) for code in codes}
