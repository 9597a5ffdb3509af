"""A plugin as another package ships one: built from its source and installed as a distribution, into a folder
of its own, so that only the processes given that folder on their path see it (never the rest of the suite)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def installed_plugin(tmp_path: Path, module: str, source: str, entry_points: dict[str, dict[str, str]]) -> Path:
    """The folder the distribution named after ``module`` (its one module, ``source``) is installed into; ``entry_points``
    by group, each name -> "module:object"."""
    project, site = tmp_path / f"{module}-src", tmp_path / f"{module}-site"
    project.mkdir()
    groups = "".join(f'\n[project.entry-points."{group}"]\n' + "".join(f'{name} = "{value}"\n'
                                                                      for name, value in points.items())
                     for group, points in entry_points.items())
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{module.replace("_", "-")}"\nversion = "0.1"\n{groups}\n'
        f'[tool.setuptools]\npy-modules = ["{module}"]\n')
    (project / f"{module}.py").write_text(source)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                    "--target", str(site), str(project)], check=True, capture_output=True)
    return site


def with_plugin(env: dict[str, str], site: Path) -> dict[str, str]:
    """``env`` for a process that has the plugin installed."""
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
