"""The error family of marlin-agent.

Every failure a user can cause or meet has its own class with a stable ``code`` (used in
JSON errors), a message that says what happened, and a ``hint`` that says what to do
next. Only the front doors turn these into exit codes and JSON documents.
"""

from __future__ import annotations

from typing import ClassVar

from marlin_agent.file_names import escaped
from marlin_agent.redaction import redact

GATED_MODEL_URL = "https://huggingface.co/NemoStation/Marlin-2B"

NO_SERVER_HINT = (
    "Marlin needs an OpenAI-compatible server. Three ways to get one: "
    "(1) let marlin-agent install and run a local engine: `marlin-agent setup --local` "
    "(vLLM on NVIDIA, the MLX engine on Apple Silicon, a slow CPU engine elsewhere); "
    "(2) use a hosted endpoint: set MARLIN_BASE_URL and MARLIN_API_KEY; "
    "(3) point MARLIN_BASE_URL (or --base-url) at a server you already run, "
    "e.g. http://127.0.0.1:8000/v1."
)


class MarlinAgentError(Exception):
    """Base class: a failure with a code, a message and a hint for the user."""

    code: ClassVar[str] = "error"
    exit_code: ClassVar[int] = 1
    default_hint: ClassVar[str] = ""
    # True when every further request or write would fail the same way (a dead server, a full
    # disk), so a run stops at once instead of recording the same failure for each chunk.
    stops_run: ClassVar[bool] = False

    def __init__(self, message: str, hint: str | None = None, parameter: str | None = None) -> None:
        # It often names a file (file names need not be UTF-8), and may quote an address with a secret in it.
        message = redact(escaped(message))
        super().__init__(message)
        self.message = message
        self.hint = redact(hint) if hint is not None else self.default_hint
        # The caller's parameter that would fix it: each front door names it in its own spelling
        # (``--planner`` on the command line, ``planner`` over MCP), so the hint does not name it.
        self.parameter = parameter

    def hint_for(self, spelling=lambda name: name) -> str:
        """The hint, beginning with the parameter to pass as ``spelling`` writes it, when there is one."""
        if not self.parameter:
            return self.hint
        return f"Pass {spelling(self.parameter)}" + (f", {self.hint}" if self.hint else ".")

    def to_dict(self, spelling=lambda name: name) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "hint": self.hint_for(spelling)}


# --- bad input -------------------------------------------------------------------------


class InputError(MarlinAgentError):
    code = "bad_input"
    exit_code = 2


class VideoNotFound(InputError):
    code = "video_not_found"
    default_hint = "Check the path; relative paths are resolved from the current directory."


class VideoUnreadable(InputError):
    """The file exists but is not a video we can decode (not a video, corrupt, truncated)."""

    code = "video_unreadable"
    default_hint = (
        "Open the file in a video player to check it. A partially downloaded or copied file "
        "is often truncated: fetch it again."
    )


class VideoTruncated(VideoUnreadable):
    code = "video_truncated"
    default_hint = (
        "The file ends before its own index says it should: it was probably cut short while "
        "downloading or copying. Fetch or export it again."
    )


class VideoEmpty(InputError):
    code = "video_empty"
    default_hint = "The file holds no footage to analyse; check the export or download that made it."


class InvalidTimeRange(InputError):
    code = "invalid_time_range"
    default_hint = "Give --start and --end in seconds within the video, with start < end."


class EmptyQuery(InputError):
    code = "empty_query"
    default_hint = 'Describe the event in words, e.g. "a red ball rolls across the floor".'


class SourceUnavailable(InputError):
    """A URL that could not be fetched (dead link, private video, no network)."""

    code = "source_unavailable"
    default_hint = "Open the URL in a browser to check it; private or region-locked videos need cookies."


class NoVideosFound(InputError):
    code = "no_videos_found"
    default_hint = "Pass video files, folders that contain videos (searched recursively), or URLs."


class PathNotAllowed(InputError):
    """A path outside the folders this front door was allowed to touch (the MCP server's roots)."""

    code = "path_not_allowed"
    default_hint = "Use a path inside the allowed roots, or restart the server with --root for that folder."


class OutputNotOurs(InputError):
    """An output file exists and is not this job's own: writing to it would destroy someone's data."""

    code = "output_exists"
    default_hint = ("Give a new output name, or pass --force (over MCP: overwrite=true) to replace the file "
                    "with this job's rows.")


class MissingDependency(MarlinAgentError):
    """An optional extra is not installed."""

    code = "missing_dependency"
    exit_code = 2

    def __init__(self, feature: str, extra: str) -> None:
        super().__init__(f"{feature} needs the optional '{extra}' extra, which is not installed",
                         hint=f"pip install 'marlin-agent[{extra}]'")


class IndexMismatch(MarlinAgentError):
    """The index was built with another embedding model than the one configured."""

    code = "index_mismatch"
    exit_code = 2


class OutputBusy(MarlinAgentError):
    """Another job is writing the same output: two writers would repeat or interleave rows."""

    code = "output_busy"
    exit_code = 5  # the same command succeeds once the other job ends
    default_hint = "Wait for the other extract writing it to finish (a re-run then resumes), or give another output."


class IndexBusy(MarlinAgentError):
    """Another process kept the index to itself for longer than ``[library] lock_wait``."""

    code = "index_busy"
    exit_code = 5  # not a server problem (3): the same command succeeds once the other run ends
    default_hint = ("Another marlin-agent process is indexing into this database; run again when it is done, "
                    "raise [library] lock_wait, or use another --db.")


class DbReadOnly(MarlinAgentError):
    """The index is in a place this process may read but not write."""

    code = "db_read_only"
    exit_code = 2
    default_hint = ("Reading it works: search, and ask over footage it already holds. To index, point --db "
                    "(or [library] db) at a writable folder, or make this one writable.")


class DbUnavailable(MarlinAgentError):
    """The index lives in an object store that cannot be reached or opened."""

    code = "db_unavailable"
    exit_code = 3  # like an unreachable server: the same command works once the store answers
    default_hint = ("Check the bucket and the store's settings in the environment: AWS_ACCESS_KEY_ID, "
                    "AWS_SECRET_ACCESS_KEY, AWS_REGION, and AWS_ENDPOINT_URL (+ AWS_ALLOW_HTTP=true for a plain-http "
                    "endpoint) for S3 and S3-compatible stores; GOOGLE_SERVICE_ACCOUNT for gs://; AZURE_STORAGE_"
                    "ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY for az://. See docs/scale.md.")


class DiskFull(MarlinAgentError):
    """The disk under the index or the cache has no room left; what was written before is kept."""

    code = "disk_full"
    exit_code = 1
    stops_run = True  # every later write would fail the same way


class IndexDamaged(MarlinAgentError):
    """Files of the index are missing or unreadable (a crash, a bad disk, a hand that deleted them)."""

    code = "index_damaged"
    exit_code = 1
    stops_run = True
    default_hint = ("`marlin-agent doctor` lists what is damaged; `marlin-agent index --repair` rebuilds missing "
                    "search indexes, returns damaged tables to their last good version and captions again "
                    "what that loses.")


class JobFailed(MarlinAgentError):
    """A distributed job (``index --ray``, ``extract --ray``) could not reach its cluster, or a
    shard failed there for good."""

    code = "job_failed"
    exit_code = 1
    default_hint = ("Run the same command again: every shard resumes from the index and asks Marlin only "
                    "for what is missing.")


class ConfigError(MarlinAgentError):
    code = "config_invalid"
    exit_code = 2


# --- the Marlin server -----------------------------------------------------------------


class ServerError(MarlinAgentError):
    code = "server_error"
    exit_code = 3


class ServerNotConfigured(ServerError):
    code = "server_not_configured"
    stops_run = True
    default_hint = NO_SERVER_HINT


class ServerUnavailable(ServerError):
    code = "server_unavailable"
    stops_run = True
    default_hint = NO_SERVER_HINT


class ServerTimeout(ServerError):
    code = "server_timeout"
    default_hint = (
        "The server accepted the request but did not answer in time. A cold engine pays a "
        "one-off warm-up on its first video; retry, or allow more with --timeout or MARLIN_TIMEOUT."
    )


class ServerStopped(ServerError):
    """The server answered earlier in the run, or accepted requests, and then answered no more."""

    code = "server_stopped"
    stops_run = True
    default_hint = (
        "It was killed, crashed or hangs: its log says why (out of memory is the usual cause). "
        "What was done is kept; once it is back, the same command asks only for the rest."
    )


class ServerProtocolError(ServerError):
    """The server answered, but not like an OpenAI-compatible chat-completions endpoint."""

    code = "server_bad_response"
    stops_run = True
    default_hint = (
        "Check that the base URL points at the OpenAI-compatible API root of a Marlin server "
        "(it usually ends in /v1)."
    )


class CaptionUnusable(ServerError):
    """The server answered 200, but with nothing that reads as a caption (empty, or prose)."""

    code = "caption_unusable"
    default_hint = ("An overloaded or misconfigured server answers like this. The chunk is recorded as failed "
                    "and captioned again on the next run; `marlin-agent doctor` checks the server.")


class ServerRejected(ServerError):
    """The server refused the request for a reason of its own (a 4xx we cannot map)."""

    code = "server_rejected"
    default_hint = "Read the server's message above; the server's log usually says more."


class AuthenticationFailed(ServerError):
    code = "auth_failed"
    stops_run = True
    exit_code = 4
    default_hint = (
        "The server refused the API key. Set MARLIN_API_KEY (or --api-key) to a key this "
        "endpoint accepts; a local engine accepts any non-empty key."
    )


class ModelAccessDenied(ServerError):
    code = "model_access_denied"
    stops_run = True
    exit_code = 4
    default_hint = (
        f"Marlin-2B is a gated model: request access at {GATED_MODEL_URL}, "
        "then make sure the key or token in use belongs to the account that was granted access."
    )


class ModelNotServed(ServerError):
    code = "model_not_served"
    stops_run = True
    default_hint = "Set MARLIN_MODEL (or --model) to the name the server lists under /v1/models."


class NonVideoEngine(ServerError):
    code = "engine_without_video"
    stops_run = True
    default_hint = (
        "Ollama, llama.cpp, LM Studio and TGI accept images and text but no video, so they "
        "cannot run Marlin. Serve it with vLLM (NVIDIA), SGLang (NVIDIA) or the MLX engine "
        "(Apple Silicon), or use a hosted endpoint."
    )


class ChunkFailed(MarlinAgentError):
    """One chunk of a video failed after retries; the others may still have answered."""

    code = "chunk_failed"
    exit_code = 3


# --- local engines ------------------------------------------------------------------------


class EngineError(MarlinAgentError):
    code = "engine_error"
    exit_code = 3


class EngineUnknown(EngineError):
    code = "engine_unknown"
    exit_code = 2
    default_hint = "Engines: vllm and sglang (NVIDIA), mlx (Apple Silicon), cpu (anything, slowly)."


class EngineUnsupported(EngineError):
    """The engine cannot run on this machine (no NVIDIA GPU for vLLM, not Apple Silicon for MLX)."""

    code = "engine_unsupported"
    exit_code = 2


class EngineNotInstalled(EngineError):
    code = "engine_not_installed"
    exit_code = 2


class EngineInstallFailed(EngineError):
    code = "engine_install_failed"


class EngineFailed(EngineError):
    """The engine process exited or never became healthy."""

    code = "engine_failed"


class EngineTimeout(EngineError):
    code = "engine_timeout"


# --- the planner LLM and budgets -------------------------------------------------------

PLANNER_HINT = (
    "The LLM planner needs a chat model: --planner provider/name (a LiteLLM-style string such as "
    "openai/gpt-4.1-mini, with that provider's usual API key variable set), or a local "
    "OpenAI-compatible server: MARLIN_PLANNER=<served name> and MARLIN_PLANNER_BASE_URL=http://host:port/v1. "
    "--planner pipeline answers without any LLM."
)


class PlannerError(MarlinAgentError):
    code = "planner_error"
    exit_code = 3
    default_hint = PLANNER_HINT


class PlannerNotConfigured(PlannerError):
    code = "planner_not_configured"
    exit_code = 2


class PlannerUnavailable(PlannerError):
    """The planner's endpoint could not be reached or refused every request."""

    code = "planner_unavailable"


class BudgetExhausted(MarlinAgentError):
    """A run used up its budget of Marlin calls, planner requests or tokens."""

    code = "budget_exhausted"
    exit_code = 3
    default_hint = "Raise the budget in [planner] (max_requests, max_tokens, max_marlin_calls) or narrow the question."


class TimeLimitReached(MarlinAgentError):
    """A command bounded in time (``describe --time-limit``) had nothing to show when the time ran out."""

    code = "time_limit_reached"
    exit_code = 3


class ModelUnavailable(MarlinAgentError):
    """A model the agent runs itself (embeddings, verification) is neither cached nor downloadable."""

    code = "model_unavailable"
    exit_code = 2
    # Every later step needs the same model: stop instead of recording the same failure per candidate.
    stops_run = True


def exit_code_for(code: str) -> int:
    """The exit status of the error whose code is ``code`` (1 for a code no error has)."""
    pending = [MarlinAgentError]
    while pending:
        kind = pending.pop()
        if kind.code == code:
            return kind.exit_code
        pending.extend(kind.__subclasses__())
    return 1
