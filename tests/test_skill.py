"""The Agent Skill folder: valid under the Agent Skills spec, with the Hermes and OpenClaw fields,
and in step with the CLI it teaches."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from marlin_agent.cli.main import app

SKILL_DIR = Path(__file__).resolve().parents[1] / "skills" / "marlin-video"


def _frontmatter() -> tuple[dict, str]:
    text = (SKILL_DIR / "SKILL.md").read_text()
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    assert match, "SKILL.md must open with a --- frontmatter block"
    return yaml.safe_load(match.group(1)), match.group(2)


def test_frontmatter_meets_the_agent_skills_spec():
    meta, body = _frontmatter()
    assert meta["name"] == SKILL_DIR.name
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", meta["name"]) and len(meta["name"]) <= 64
    assert 1 <= len(meta["description"]) <= 1024
    assert len(meta.get("compatibility", "")) <= 500
    assert isinstance(meta.get("allowed-tools", ""), str)  # space-delimited in the spec
    assert len((SKILL_DIR / "SKILL.md").read_text().splitlines()) < 500


def test_the_reference_validator_accepts_the_skill():
    # skills-ref, the spec's own validator (strictyaml: block style only; six top-level fields).
    result = subprocess.run([sys.executable, "-m", "skills_ref.cli", "validate", str(SKILL_DIR)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_frontmatter_carries_the_hermes_and_openclaw_fields_where_they_read_them():
    # Both hosts read their blocks nested under metadata (Hermes through PyYAML, OpenClaw
    # through YAML then JSON5); nothing of theirs sits at the top level, which the spec forbids.
    meta, _ = _frontmatter()
    assert set(meta) <= {"name", "description", "license", "allowed-tools", "metadata", "compatibility"}
    assert meta["metadata"]["hermes"]["requires_toolsets"] == ["terminal"]
    openclaw = meta["metadata"]["openclaw"]
    assert openclaw["requires"]["bins"] == ["marlin-agent"] and set(openclaw["os"]) == {"linux", "darwin"}
    (install,) = openclaw["install"]
    assert install["kind"] == "uv" and install["bins"] == ["marlin-agent"]


def test_the_openclaw_install_brings_every_extra_the_skill_uses():
    meta, _ = _frontmatter()
    package = meta["metadata"]["openclaw"]["install"][0]["package"]
    name, extras = re.fullmatch(r"([a-z-]+)\[([a-z,]+)\]", package).groups()
    assert name == "marlin-agent"
    declared = tomllib.loads((SKILL_DIR.parents[1] / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    wanted = set(extras.split(","))
    expanded = set(wanted)
    for extra in wanted:
        for dep in declared[extra]:
            for group in re.findall(r"marlin-agent\[([a-z,]+)\]", dep):
                expanded |= set(group.split(","))
    # ask/index/search need the library, transcripts the speech, youtube the links, mcp the server,
    # extract its own extra: without them those commands fail with missing_dependency.
    assert {"library", "transcripts", "youtube", "mcp", "extract"} <= expanded


def test_every_linked_reference_exists():
    _, body = _frontmatter()
    texts = [body] + [p.read_text() for p in (SKILL_DIR / "references").glob("*.md")]
    links = {link.split("#")[0] for text in texts for link in re.findall(r"\]\(([^)]+)\)", text)
             if not link.startswith("http")}
    assert links
    for link in links:
        assert (SKILL_DIR / link).is_file() or (SKILL_DIR / "references" / link).is_file(), link


def test_every_command_the_skill_teaches_exists():
    commands = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    texts = [(SKILL_DIR / "SKILL.md").read_text()] + [p.read_text() for p in (SKILL_DIR / "references").glob("*.md")]
    taught = {m for text in texts for m in re.findall(r"(?:^|`)marlin-agent ([a-z][a-z-]*)", text, re.M)}
    assert taught and taught <= commands, taught - commands


def test_eval_prompts_cover_both_triggering_and_not():
    evals = json.loads((SKILL_DIR / "evals" / "evals.json").read_text())
    assert evals["skill"] == SKILL_DIR.name
    outcomes = [case["should_trigger"] for case in evals["cases"]]
    assert outcomes.count(True) >= 5 and outcomes.count(False) >= 3
    assert all(case["prompt"].strip() and case["expect"].strip() for case in evals["cases"])


def test_the_description_sits_closer_to_video_questions_than_to_other_requests(offline_models, tmp_path):
    """A proxy for routing: hosts pick skills by reading descriptions with an LLM; here MiniLM reads
    them. Any trigger prompt should rank above a non-trigger one nearly always (AUC >= 0.9)."""
    from marlin_agent.library.embeddings import Embedder

    meta, _ = _frontmatter()
    cases = json.loads((SKILL_DIR / "evals" / "evals.json").read_text())["cases"]
    model = Embedder(offline_models["MARLIN_EMBED_MODEL"], tmp_path)
    description = model.embed([meta["description"]])[0]
    scores = model.embed([c["prompt"] for c in cases]) @ description
    positive = [s for s, c in zip(scores, cases, strict=False) if c["should_trigger"]]
    negative = [s for s, c in zip(scores, cases, strict=False) if not c["should_trigger"]]
    auc = sum(p > n for p in positive for n in negative) / (len(positive) * len(negative))
    assert auc >= 0.9, auc
