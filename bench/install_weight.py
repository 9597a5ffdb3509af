"""Install weight: the size of a fresh virtual environment per install, and whether torch came along.

Each row is a new venv with the project installed from this checkout (editable, as the README
does), measured on disk with its pip. Targets: the core (hosted use: caption, find, describe)
under 150 MB; the library and transcripts under 600 MB; none with torch or nvidia-* packages.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALLS = {"core (hosted use)": "", "library + transcripts": "[library,transcripts]",
            "the README's command: library + transcripts + youtube": "[library,transcripts,youtube]"}
HEAVY = ("torch", "nvidia-", "sentence-transformers", "transformers", "scipy", "scikit-learn")


def venv_with(extras: str, folder: Path) -> tuple[float, list[str]]:
    """(megabytes on disk, installed distributions) of a new venv with marlin-agent``extras``."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    pip = folder / "bin" / "pip"
    subprocess.run([str(pip), "install", "-q", "-e", f"{ROOT}{extras}"], check=True, capture_output=True)
    listed = subprocess.run([str(pip), "list", "--format=freeze"], check=True, capture_output=True, text=True)
    names = [line.split("==")[0].lower() for line in listed.stdout.splitlines() if "==" in line]
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink())
    return round(size / 1e6, 1), names


def run() -> dict:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for label, extras in INSTALLS.items():
            megabytes, names = venv_with(extras, Path(scratch) / f"venv{len(rows)}")
            packages = Path(scratch) / f"venv{len(rows)}" / "lib"
            biggest = sorted(((sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 1e6, p.name)
                              for p in next(packages.glob("python*")).joinpath("site-packages").iterdir()
                              if p.is_dir()), reverse=True)[:4]
            rows.append({"install": label, "megabytes": megabytes, "distributions": len(names),
                         "heavy": sorted(n for n in names if n.startswith(HEAVY)),
                         "biggest": ", ".join(f"{name} {mb:.0f} MB" for mb, name in biggest)})
    return {"rows": rows}


if __name__ == "__main__":
    for row in run()["rows"]:
        print(row)
