"""Structured extraction with a real small model: ``python -m evals.real_models.extraction``.

Two jobs, each row filled by the real model through the server's structured output (``extraction/fill``):

- the toy suite with the ``objects`` schema (colours, shapes, motions and times of shapes on screen),
  scored against the footage generator's truth;
- the realistic world's 20 scenes, one row per video, with the ``scene_events`` schema (the kind of
  footage and every event with its times), scored against the world's truth: the kind, and each event's
  start and end within a second (the words an event is told in are not scored).

For each: rows valid on the first answer, valid after the re-asks, field accuracy, seconds per row and
the longest single request. Results go to ``evals/results/real_extraction.json`` with the date and the
server.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import time
from pathlib import Path

import httpx

from evals.real_models.server import ServedModel, add_server_arguments, served_from
from evals.synthetic.offline_models import minilm_dir, nli_dir
from evals.synthetic.realistic import realistic_suite
from evals.synthetic.scenes import scenes
from evals.synthetic.simulator import MarlinSimulator
from evals.synthetic.suites import extraction_labels, grounding_suite
from marlin_agent.config import load_settings
from marlin_agent.evaluation.extraction import run_extract_eval
from marlin_agent.extraction.schema import load_schema

SCHEMAS = Path(__file__).parent.parent / "synthetic" / "schemas"


def realistic_labels(world: Path) -> Path:
    """One labelled row per scene: its kind, and its seen events' true spans."""
    lines = []
    for scene in scenes("all"):
        spans = json.loads((world / "videos" / f"{scene.name}.spans.json").read_text())["spans"]
        events = [{"start": round(spans[str(n)][0], 1), "end": round(spans[str(n)][1], 1)}
                  for n, event in enumerate(scene.events) if not event.spoken]
        lines.append(json.dumps({"video_id": scene.name, "data": {"footage": scene.kind, "events": events}}))
    target = world / "scene_events.jsonl"
    target.write_text("\n".join(lines) + "\n")
    return target


class Timed(httpx.AsyncBaseTransport):
    """Times every request to the model server (the longest is reported)."""

    def __init__(self) -> None:
        self.inner, self.seconds = httpx.AsyncHTTPTransport(), []

    async def handle_async_request(self, request):
        started = time.monotonic()
        response = await self.inner.handle_async_request(request)
        await response.aread()
        self.seconds.append(time.monotonic() - started)
        return response


def timed_llm(served: ServedModel, home: Path, timer: Timed):
    """The served model as extraction would build it (forms learnt and kept under ``home``), its requests timed."""
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from marlin_agent.llm.models import LLM, PROFILES_FILE
    from marlin_agent.llm.profiles import ProfileBook
    from marlin_agent.llm.transport import AccentTransport

    book = ProfileBook(home / PROFILES_FILE)
    key = ProfileBook.key(served.base_url, served.model)
    client = AsyncOpenAI(base_url=served.base_url, api_key="not-needed", timeout=120, max_retries=1,
                         http_client=httpx.AsyncClient(transport=AccentTransport(book, key, served.base_url, timer),
                                                       timeout=120))
    return LLM(model=OpenAIChatModel(served.model, provider=OpenAIProvider(openai_client=client)), book=book, key=key,
               base_url=served.base_url)


def run_job(name: str, schema_file: Path, labels: Path, videos: Path, settings, out: Path,
            served: ServedModel) -> dict:
    timer = Timed()
    started = time.monotonic()
    report = asyncio.run(run_extract_eval(load_schema(schema_file), [json.loads(x) for x in labels.read_text()
                                                                    .splitlines() if x.strip()],
                                          videos, settings, out, name, model=timed_llm(served, settings.home, timer)))
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
    return {"suite": name, "rows": len(rows), "valid_first_answer": round(sum(bool(r.get("first_valid")) for r in rows)
                                                                        / len(rows), 3),
            "valid_after_reasks": report.valid_rate, "field_accuracy": report.field_accuracy,
            "per_field": report.per_field, "seconds_per_row": round((time.monotonic() - started) / len(rows), 1),
            "longest_request_seconds": round(max(timer.seconds, default=0.0), 1), "requests": len(timer.seconds),
            "sent_back_for_contradictions": sum(bool(r["attempts"] > 1 and r.get("first_valid")) for r in rows),
            "warnings_left": sum(len(r.get("warnings") or []) for r in rows),
            "errors": [r["error"] for r in rows if r["error"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_server_arguments(parser)
    args = parser.parse_args()
    served = served_from(args)
    work = args.cache / "real-models" / "extraction"
    toy = grounding_suite(work / "toy", videos=12)
    realistic_suite(work / "world", "all")
    models = work / "models"
    models.mkdir(parents=True, exist_ok=True)
    jobs = []
    try:
        with MarlinSimulator() as simulator:
            env = {"MARLIN_HOME": str(work / "home"), "MARLIN_BASE_URL": simulator.base_url,
                   "MARLIN_EMBED_MODEL": str(minilm_dir()), "MARLIN_VERIFY_MODEL": str(nli_dir(models)), **served.env()}
            settings = load_settings({"library.transcribe": False}, env=env)
            stamp = time.strftime("%H%M%S")
            jobs.append(run_job("toy/objects", SCHEMAS / "objects.json", extraction_labels(toy), toy.parent / "videos",
                                settings, work / f"toy-{stamp}", served))
            jobs.append(run_job("realistic/scene_events", SCHEMAS / "scene_events.json",
                                realistic_labels(work / "world"), work / "world" / "videos", settings,
                                work / f"realistic-{stamp}", served))
    finally:
        served.stop()
    summary = {"date": datetime.date.today().isoformat(), "server": served.server, "model": served.model,
               "marlin": "simulator (evals/synthetic)", "jobs": jobs}
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "real_extraction.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
