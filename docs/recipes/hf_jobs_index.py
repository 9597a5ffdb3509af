# /// script
# requires-python = ">=3.11"
# dependencies = [
#     "marlin-agent[library,transcripts,youtube,s3]",
# ]
# ///
"""Index one shard of a footage collection into a library in a bucket, on one HF Jobs GPU.

    hf jobs uv run --flavor a10g-small --secrets HF_TOKEN \
        --secrets AWS_ACCESS_KEY_ID --secrets AWS_SECRET_ACCESS_KEY -e AWS_REGION=eu-west-1 \
        docs/recipes/hf_jobs_index.py --sources urls-3.txt --db s3://bucket/index --shard 3/8

The job installs and starts vLLM with Marlin on its GPU (`marlin-agent setup --local vllm`; the
weights are gated, hence HF_TOKEN), then runs `marlin-agent index` for its shard. Its report is
printed as JSON at the end. When every shard has finished, run `marlin-agent index --finalize --db
s3://bucket/index` once, from anywhere. docs/scale.md explains the shares and their limits.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path


def marlin_agent(*args: str) -> dict:
    """Run one marlin-agent command with --json; its document, or exit with its error."""
    run = subprocess.run([sys.executable, "-m", "marlin_agent", *args, "--json"], stdout=subprocess.PIPE, text=True)
    document = json.loads(run.stdout or "{}")
    if run.returncode != 0:
        print(json.dumps(document, indent=2), file=sys.stderr)
        sys.exit(run.returncode)
    return document


def sources_of(given: str) -> list[str]:
    """A folder (a mounted bucket) as it is, or a text file of URLs, one per line."""
    path = Path(given)
    if path.is_dir():
        return [str(path)]
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", required=True, help="A folder, or a text file of URLs (one per line).")
    parser.add_argument("--db", required=True, help="The library: s3://bucket/prefix (or gs://, az://).")
    parser.add_argument("--shard", required=True, help="I/N: this job's share.")
    parser.add_argument("--concurrency", default="24", help="Requests in flight (about 24 on a 15 GB node).")
    options = parser.parse_args()

    os.environ.setdefault("MARLIN_HOME", "/tmp/marlin")  # the job's own cache: clips, transcripts, models
    marlin_agent("setup", "--local", "vllm", "--yes")
    report = marlin_agent("index", *sources_of(options.sources), "--db", options.db, "--shard", options.shard,
                          "--concurrency", options.concurrency)
    print(json.dumps({key: report[key] for key in ("shard", "videos_new", "videos_partial", "videos_failed",
                                                   "chunks_captioned", "chunks_failed", "marlin_calls", "seconds")}))


if __name__ == "__main__":
    main()
