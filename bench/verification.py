"""What verification costs per candidate beside Marlin's own time, and Marlin calls per question.

On the realistic world's held-out footage (indexed first, no transcripts), every question
of every event and every hard negative is asked with the simulator answering without added
latency. A ``verify`` step's trace says how long it took and how much of that it waited for
Marlin (the simulator still decodes each clip it is sent); the rest is the agent's own work:
staging the tight span for its fresh caption and re-grounding, reading the index, the entailment
model, lexical alignment, MiniLM similarity. The entailment model alone is timed too: cold, on the
eight pairs of a question's first candidate, and as the questions spent it (the pairs each one had
to compute, run again once the simulator is idle, per candidate verified).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from evals.synthetic.offline_models import minilm_dir, nli_dir
from evals.synthetic.realistic import realistic_suite
from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.app.ask import ask
from marlin_agent.config import load_settings
from marlin_agent.domain import Event
from marlin_agent.indexing.run import index_inputs
from marlin_agent.verification.entailment import EntailmentModel
from marlin_agent.verification.verifier import Verifier


def _entailment_alone(model_dir: Path, annotations: dict, rounds: int = 20) -> float:
    """Milliseconds for one candidate's pairs (8 premises against one event), nothing remembered.

    Each pair runs alone at its own length (about 20-30 tokens here), one thread each, as many at once
    as there are cores; the test model's export was fixed at 160 tokens a pair until the session freed
    that length (onnx_session)."""
    entry = next(iter(annotations.values()))
    premises = [f"premise {n}: {q}" for n, q in enumerate(entry["queries"][:8])]
    model = EntailmentModel(model_dir)
    model.score([("warm up", "the model")])
    times = []
    for n in range(rounds):
        started = time.perf_counter()
        model.score([(p, f"{entry['queries'][0]} ({n})") for p in premises])
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 1)


def _lexical_alone(settings, annotations: dict) -> float:
    """Milliseconds for the lexical signal on one candidate: the asked event against every caption event of
    its video (the span's and the rest, for ``lexical_best``), WordNet warm as in any long-lived process
    but each pair new to the aligner's memo."""
    from marlin_agent.verification.signals import SpanTexts
    from marlin_agent.verification.signals.lexical import Lexical

    signal = Lexical(settings, embed=None)
    times = []
    for entry in annotations.values():
        events = [Event(start=float(s), end=float(e), text=f"{q} (worded anew)")
                  for (s, e), q in zip(entry["spans"], entry["queries"], strict=False)]
        for n, question in enumerate(entry["queries"][1::3] + entry["negatives"]):
            texts = SpanTexts(event=question, span=tuple(entry["spans"][n % len(entry["spans"])]), events=events)
            started = time.perf_counter()
            signal.read(texts)
            times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times[len(times) // 10:]), 2)  # the first tenth warms WordNet's pages


@contextmanager
def _computed_pairs(batches: list[list[tuple[str, str]]]):
    """Record the pairs each entailment call had to compute (those not remembered) while the block runs."""
    real = EntailmentModel._run_all

    def run_all(self, pairs):
        batches.append(list(pairs))
        return real(self, pairs)

    EntailmentModel._run_all = run_all
    try:
        yield
    finally:
        EntailmentModel._run_all = real


def _entailment_in_asks(model_dir: Path, batches: list[list[tuple[str, str]]], candidates: int) -> float:
    """Milliseconds of entailment per candidate as the questions spent it: every pair the asks had to
    compute, in the same calls, run again on a fresh model once the simulator is idle (during the asks it
    decodes clips on the same two cores, which a Marlin server on its own machine does not), divided by the
    candidates verified. Later candidates of a question reuse the pairs of the video's events."""
    model = EntailmentModel(model_dir)
    model.score([("warm up", "the model")])
    started = time.perf_counter()
    for pairs in batches:
        model.score(pairs)
    return round((time.perf_counter() - started) * 1000 / max(1, candidates), 1)


@contextmanager
def _timed_reading(times: list[float]):
    """Time each ``Verifier.read`` (every signal over one candidate's texts: the agent's own reading, no
    Marlin call, no staging) while the block runs."""
    real = Verifier.read

    def read(self, texts):
        started = time.perf_counter()
        try:
            return real(self, texts)
        finally:
            times.append((time.perf_counter() - started) * 1000)

    Verifier.read = read
    try:
        yield
    finally:
        Verifier.read = real


def run() -> dict:
    with tempfile.TemporaryDirectory() as scratch, MarlinSimulator(think="none") as simulator:
        data = realistic_suite(Path(scratch), "heldout")
        annotations = json.loads(data.read_text())
        models = Path(scratch) / "models"
        nli = nli_dir(models)
        home = Path(scratch) / "home"
        home.mkdir()
        env = {"MARLIN_HOME": str(home), "MARLIN_BASE_URL": simulator.base_url, "MARLIN_EMBED_MODEL": str(minilm_dir()),
               "MARLIN_VERIFY_MODEL": str(nli)}
        settings = load_settings({"library.transcribe": False}, env=env)
        videos = Path(scratch) / "videos"
        asyncio.run(index_inputs([str(videos)], settings))
        verify_ms, own_ms, calls, candidates, reading, computed = [], [], [], [], [], []
        for video_id, entry in annotations.items():
            for question in entry["queries"][::3] + entry["negatives"]:
                with _timed_reading(reading), _computed_pairs(computed):
                    answer = asyncio.run(ask(question, [str(videos / f"{video_id}.mp4")], settings))
                checked = [s for s in answer.trace if s.step == "verify" and "confidence" in s.detail]
                verify_ms += [s.seconds * 1000 for s in checked]
                own_ms += [(s.seconds - s.marlin_seconds) * 1000 for s in checked]
                calls.append(answer.usage.marlin_calls)
                candidates.append(len(checked))
        return {
            "videos": len(annotations), "questions": len(calls), "candidates": sum(candidates),
            "verify_ms_p50": round(statistics.median(verify_ms), 1),
            "verify_ms_p95": round(sorted(verify_ms)[int(0.95 * (len(verify_ms) - 1))], 1),
            "verify_own_ms_p50": round(statistics.median(own_ms), 1),
            "verify_own_ms_p95": round(sorted(own_ms)[int(0.95 * (len(own_ms) - 1))], 1),
            "reading_ms_p50": round(statistics.median(reading), 1),
            "entailment_ms_per_candidate": _entailment_alone(nli, annotations),
            "entailment_ms_per_candidate_in_asks": _entailment_in_asks(nli, computed, sum(candidates)),
            "entailment_pairs_per_candidate_in_asks": round(sum(map(len, computed)) / max(1, sum(candidates)), 2),
            "lexical_ms_per_candidate": _lexical_alone(settings, annotations),
            "calls_per_question_mean": round(statistics.mean(calls), 2), "calls_per_question_max": max(calls),
            "calls_per_candidate": round(sum(calls) / max(1, sum(candidates)), 2),  # per span verified
            "model": nli.name,
        }


if __name__ == "__main__":
    print(run())
