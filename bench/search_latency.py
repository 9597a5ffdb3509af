"""Search latency (p50/p95) over a synthetic index of 100,000 segments.

Rows get random unit vectors and texts drawn from a small vocabulary, so building the
index needs no embedding work; each query is embedded for real, as a user's would be.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from marlin_agent.library.embeddings import Embedder
from marlin_agent.library.records import VideoRecord
from marlin_agent.library.store import Library

WORDS = ("red blue yellow white purple green dog cat ball car goal player kicks runs jumps falls crowd cheers "
         "referee whistle door opens closes man woman child walks table kitchen street field night rain").split()
QUERIES = ["the goal", "a dog runs across the field", "referee blows the whistle", "red car at night",
           "child opens the door", "crowd cheers", "woman walks in the rain", "yellow ball"]


def _texts(rng, count: int, length: int) -> list[str]:
    picks = rng.integers(0, len(WORDS), size=(count, length))
    return [" ".join(WORDS[i] for i in row) for row in picks]


def build(library: Library, segments: int, videos: int = 200, topics: int = 2000) -> None:
    """``segments`` rows: 60% events, 20% scenes, 20% transcript lines, over ``videos`` videos.

    Real embeddings cluster by topic, which is what vector indexes exploit; random vectors
    would not. So rows draw their text from ``topics`` distinct texts, embedded for real,
    and get that text's vector plus a little noise.
    """
    rng = np.random.default_rng(3)
    ids = [f"{i:032x}" for i in range(videos)]
    for vid in ids:
        library.put_video(VideoRecord(id=vid, path=f"/footage/{vid}.mp4", title=f"video {vid[-4:]}", duration=3600,
                                      fps=30, width=1280, height=720, has_audio=True, chunk_seconds=60, chunks_planned=60))
    topic_texts = _texts(rng, topics, 8)
    topic_vectors = library.embedder.embed(topic_texts)
    kinds = rng.choice(["event", "event", "event", "scene", "transcript"], size=segments)
    topic = rng.integers(0, topics, size=segments)
    vectors = topic_vectors[topic] + rng.normal(scale=0.02, size=(segments, topic_vectors.shape[1])).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    start = rng.uniform(0, 3500, size=segments)
    video = rng.integers(0, videos, size=segments)
    rows = [
        {"id": f"seg-{i}", "video_id": ids[video[i]], "chunk_id": f"c{i // 8}", "kind": str(kinds[i]),
         "start": float(start[i]), "end": float(start[i] + 5), "text": topic_texts[topic[i]], "model": "bench",
         "prompt_version": 1, "words": "", "vector": vectors[i]}
        for i in range(segments)
    ]
    library.create_tables()
    table = library.store.raw_table("segments")  # appended in bulk, not merged row by row
    for offset in range(0, segments, 20_000):
        table.add(rows[offset : offset + 20_000])
    library.optimize()


def run(segments: int = 100_000, queries: int = 200) -> dict:
    from evals.synthetic.offline_models import minilm_dir

    embedder = Embedder(str(minilm_dir()), Path(tempfile.gettempdir()))
    with tempfile.TemporaryDirectory() as folder:
        library = Library(folder, embedder)
        started = time.perf_counter()
        build(library, segments)
        built = time.perf_counter() - started
        for query in QUERIES:  # warm caches and the model
            library.search(query, 10)
        timings = []
        filtered = []
        for n in range(queries):
            query = QUERIES[n % len(QUERIES)]
            t = time.perf_counter()
            library.search(query, 10)
            timings.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            library.search(query, 10, video_ids=[f"{v:032x}" for v in range(5)])
            filtered.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        for _ in range(50):
            embedder.embed([QUERIES[0]])
        embed_ms = (time.perf_counter() - t) * 1000 / 50
    q = lambda values, p: round(float(np.percentile(values, p)), 1)  # noqa: E731
    return {"segments": segments, "build_seconds": round(built, 1), "p50_ms": q(timings, 50), "p95_ms": q(timings, 95),
            "filtered_p50_ms": q(filtered, 50), "filtered_p95_ms": q(filtered, 95),
            "query_embedding_ms": round(embed_ms, 1), "mean_ms": round(statistics.mean(timings), 1)}


if __name__ == "__main__":
    print(run())
