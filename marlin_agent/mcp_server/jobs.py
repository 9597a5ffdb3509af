"""Long work as jobs a client can poll.

An MCP tool call or a REST request should not hold a client for an hour. Every long call runs
as a job; a call returns the job's result when it finishes within the call's bound, and
otherwise the job keeps running in the server's event loop after the call returns, for the
client to poll (or, over REST, to follow as server-sent events).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel

from marlin_agent.domain import SCHEMA_VERSION, SchemaVersion
from marlin_agent.errors import InputError, MarlinAgentError
from marlin_agent.redaction import redact

JobState = Literal["running", "done", "failed"]


class Job(BaseModel):
    """A job's state; ``result`` holds the finished command's JSON document."""

    schema_version: SchemaVersion = SCHEMA_VERSION
    id: str
    kind: str
    state: JobState
    started: float
    seconds: float
    done: int = 0
    total: int | None = None
    message: str = ""
    result: dict[str, Any] | None = None
    error: dict[str, str] | None = None


class UnknownJob(InputError):
    code = "unknown_job"
    default_hint = "Job ids come from the index or extract tool; jobs live as long as the server process."


class Jobs:
    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._tasks: dict[str, asyncio.Task] = {}
        self._results: dict[str, Any] = {}
        self._failures: dict[str, MarlinAgentError] = {}

    def start(self, kind: str, work: Callable[[Job], Awaitable[BaseModel]]) -> Job:
        job = Job(id=f"{kind}-{uuid.uuid4().hex[:8]}", kind=kind, state="running", started=time.time(), seconds=0.0)
        self._jobs[job.id] = job
        self._tasks[job.id] = asyncio.get_running_loop().create_task(self._run(job, work))
        return job

    async def _run(self, job: Job, work: Callable[[Job], Awaitable[BaseModel]]) -> None:
        try:
            result = await work(job)
            self._results[job.id] = result
            # A document as the tool returns it; plain text (describe) as MCP wraps it.
            document = result.model_dump(mode="json") if isinstance(result, BaseModel) else {"result": result}
            job.result, job.state = document, "done"
        except MarlinAgentError as exc:
            self._failures[job.id] = exc
            job.error, job.state = exc.to_dict(), "failed"
        except asyncio.CancelledError:
            job.error, job.state = {"code": "cancelled", "message": "the job was stopped", "hint": ""}, "failed"
            raise
        except Exception as exc:  # a job must end in a state the client can read, whatever broke
            job.error, job.state = {"code": "internal_error", "message": redact(repr(exc)), "hint": ""}, "failed"
        finally:
            job.seconds = round(time.time() - job.started, 3)

    def get(self, job_id: str) -> Job:
        job = self._jobs.get(job_id)
        if job is None:
            raise UnknownJob(f"no job {job_id!r}")
        if job.state == "running":
            job.seconds = round(time.time() - job.started, 3)
        return job

    def result(self, job_id: str) -> Any:
        """The finished job's result as the object its work returned."""
        return self._results[job_id]

    def failure(self, job_id: str) -> MarlinAgentError | None:
        """The error a failed job ended with, when it was one of ours (None: still running, done, or a crash)."""
        return self._failures.get(job_id)

    def listed(self) -> list[Job]:
        """Every job of this process, newest first."""
        return sorted((self.get(job_id) for job_id in self._jobs), key=lambda job: job.started, reverse=True)

    async def wait(self, job_id: str, seconds: float) -> Job:
        """The job once it ends, or as it stands after ``seconds``."""
        task = self._tasks[job_id]
        await asyncio.wait({task}, timeout=seconds)
        return self.get(job_id)

    async def cancel(self, job_id: str) -> Job:
        """Stop a running job (a finished one is left as it ended)."""
        self.get(job_id)  # an unknown id is refused
        task = self._tasks[job_id]
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
        return self.get(job_id)

    async def close(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
