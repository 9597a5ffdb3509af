"""Shards: one deterministic share of a job, so N independent processes split it without talking.

A job scheduler (Kubernetes indexed jobs, Slurm arrays, HF Jobs, a CI matrix) starts N copies
of the same command with ``--shard I/N``. Each copy owns the keys whose hash lands on I, so
every chunk (or video) belongs to exactly one shard whatever order the sources are listed in,
and the shards write disjoint rows into one database.
"""

from __future__ import annotations

import hashlib
import re

from pydantic import BaseModel, Field, model_validator

from marlin_agent.errors import InputError

_FORM = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class Shard(BaseModel):
    """Shard ``index`` of ``count`` (0-based: ``0/4`` to ``3/4``)."""

    index: int = Field(ge=0)
    count: int = Field(ge=1)

    @model_validator(mode="after")
    def _in_range(self) -> Shard:
        if self.index >= self.count:
            raise ValueError(f"shard {self.index} does not exist in {self.count} shards (they count from 0)")
        return self

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"I/N"`` as a scheduler writes it, e.g. ``--shard $JOB_COMPLETION_INDEX/8``."""
        match = _FORM.match(text or "")
        hint = "Give the shard as I/N with 0 <= I < N: with 4 shards, --shard 0/4 to --shard 3/4."
        if not match:
            raise InputError(f"--shard {text!r} is not I/N", hint=hint)
        index, count = int(match[1]), int(match[2])
        if count < 1 or index >= count:
            raise InputError(f"--shard {text}: there is no shard {index} of {count} (shards count from 0)", hint=hint)
        return cls(index=index, count=count)

    def owns(self, key: str) -> bool:
        """Whether this shard does the work named ``key`` (a content id, or a chunk id)."""
        digest = hashlib.sha256(key.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index

    def part_name(self, stem: str, suffix: str) -> str:
        """This shard's output file: ``rows-00002-of-00008.jsonl``, the parts sorting in order."""
        return f"{stem}-{self.index:05d}-of-{self.count:05d}{suffix}"

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
