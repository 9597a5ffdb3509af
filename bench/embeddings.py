"""Embeddings: the ONNX Runtime embedder against sentence-transformers on torch (what it replaced).

Two figures per runtime: sentences per second (batches of 64 caption-length sentences, one
process, after a warm-up), and retrieval over the realistic world: every event's first
caption wording and every spoken line is the corpus, every question users ask for an event
(question, paraphrase, partial) is a query, and recall@k is the share of queries whose event
is among the top k. Rows: the int8 export the tests use offline; the fp32 export (what the
default hub model ships), made here from the same weights when torch and onnx are installed;
and sentence-transformers on torch, what the library used before.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from evals.synthetic.offline_models import minilm_dir, minilm_sentence_transformers_dir
from evals.synthetic.scenes import scenes
from marlin_agent.library.embeddings import Embedder


def _corpus() -> tuple[list[str], list[int], list[str], list[int]]:
    """(documents, their event, queries, their event)."""
    documents, owners, queries, wanted = [], [], [], []
    for scene in scenes():
        for happening in scene.events:
            event = len({*owners, *wanted}) + 1000 * len(documents)  # any id unique to this happening
            text = happening.captions[0] if happening.captions else happening.said
            documents.append(text)
            owners.append(event)
            for question in happening.questions.values():
                queries.append(question)
                wanted.append(event)
    return documents, owners, queries, wanted


def _recall(embed, documents, owners, queries, wanted, ks=(1, 5)) -> dict[str, float]:
    docs, asks = embed(documents), embed(queries)
    order = np.argsort(-(asks @ docs.T), axis=1)
    owners = np.array(owners)
    return {f"recall@{k}": round(float(np.mean([w in owners[row[:k]] for row, w in zip(order, wanted, strict=False)])), 3)
            for k in ks}


def _throughput(embed, sentences: list[str], rounds: int = 5) -> float:
    embed(sentences[:64])
    started = time.perf_counter()
    for _ in range(rounds):
        embed(sentences)
    return round(rounds * len(sentences) / (time.perf_counter() - started), 1)


def run() -> dict:
    documents, owners, queries, wanted = _corpus()
    sentences = (documents * (512 // len(documents) + 1))[:512]
    rows = []

    def measure(runtime: str, embed) -> None:
        rows.append({"runtime": runtime, "sentences_per_s": _throughput(embed, sentences),
                     **_recall(embed, documents, owners, queries, wanted)})

    with tempfile.TemporaryDirectory() as scratch:
        measure("ONNX Runtime, int8 export (the tests' model)", Embedder(str(minilm_dir()), Path(scratch)).embed)
        fp32 = _fp32_export(Path(scratch) / "fp32")
        if fp32 is not None:
            measure("ONNX Runtime, fp32 export (as the hub ships it)", Embedder(str(fp32), Path(scratch)).embed)
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return {"queries": len(queries), "documents": len(documents), "rows": rows}
    if minilm_sentence_transformers_dir() is None:  # its package is not installed (the test extra leaves it out)
        return {"queries": len(queries), "documents": len(documents), "rows": rows}
    model = SentenceTransformer(str(minilm_sentence_transformers_dir()), device="cpu")
    measure("sentence-transformers on torch, fp32 (before)", lambda texts: np.asarray(
        model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False), dtype=np.float32))
    return {"queries": len(queries), "documents": len(documents), "rows": rows}


def _fp32_export(folder: Path) -> Path | None:
    """all-MiniLM-L6-v2 exported to ONNX in fp32 from the packaged weights; None without torch and onnx."""
    try:
        import onnx  # noqa: F401  (the exporter needs it)
        import torch
        from transformers import AutoModel
    except ImportError:
        return None
    source = minilm_sentence_transformers_dir()
    if source is None:
        return None
    bert = AutoModel.from_pretrained(str(source)).eval()

    class TokenStates(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    (folder / "1_Pooling").mkdir(parents=True)
    for name in ("config.json", "tokenizer.json", "1_Pooling/config.json"):
        shutil.copy(source / name, folder / name)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = torch.ones(2, 8, dtype=torch.long)
    torch.onnx.export(TokenStates(), (sample, sample, torch.zeros_like(sample)), str(folder / "model.onnx"),
                      input_names=names, output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                      dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]})
    return folder


if __name__ == "__main__":
    for row in run()["rows"]:
        print(row)
