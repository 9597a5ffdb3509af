"""A Marlin simulator: a real OpenAI-compatible HTTP server that watches the clips it gets.

A test instrument only. It speaks ``/v1/chat/completions`` and ``/v1/models``, decodes the
video in each request (``file://`` paths, ``data:`` base64 or loopback http URLs), answers
the two canonical prompts from what it sees, checks API keys, can refuse ``file://`` like a
remote server, and injects faults on request. Everything clients send is recorded so tests
can assert on it. Run standalone: ``python -m evals.synthetic.simulator --port 8000``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import av

from evals.synthetic import marlin_answers as answers
from evals.synthetic.vision import Observation, look

SERVED_MODEL = "NemoStation/Marlin-2B"
FAULTS = (None, "garbage", "error500", "hang", "deny_model")


@dataclass(frozen=True)
class RequestRecord:
    kind: str  # caption | find | off_contract | rejected | the name of a mode a package adds
    prompt: str
    event: str | None
    temperature: float | None
    max_tokens: int | None
    transport: str | None  # file | base64 | http
    clip_duration: float | None
    frames_sampled: int | None
    mm_processor_kwargs: dict | None
    status: int
    seen: tuple[str, ...] = ()  # what the clip showed (toy world): lets a test pick one chunk to misbehave


@dataclass
class SimulatorState:
    """What the server is set to do, and what it has seen. Tests may change it live."""

    api_key: str | None = None
    refuse_file_urls: bool = False
    served_model: str = SERVED_MODEL
    owned_by: str = "marlin-simulator"  # what /v1/models says serves the model (vLLM says "vllm")
    allowed_media_dir: str | None = None  # like vLLM's --allowed-local-media-path: file:// only under it
    latency: float = 0.0
    think: str = "mixed"
    # "varied": each toy clip's captions word its events with their own verb ("glides", "shows up"), as a
    # real captioner does; "fixed": always "moves" / "appears", the wording tests of exact text rely on.
    wording: str = "fixed"
    # Text in the footage that a captioner reads out (a sign, a subtitle): added to every caption
    # event, as an attacker would put "ignore previous instructions ..." in view of the camera.
    inject: str | None = None
    # Misbehaviour. Transport: "error500", "hang", "garbage" (an HTML page), "deny_model", "die"
    # (the process goes away: this request's connection drops, later ones are refused). A 200
    # with a broken answer: "empty" (no content), "prose" (a paragraph, no caption format),
    # "truncated" (the caption cut off mid-event). With ``fault_when`` set, only the requests it
    # picks (by what was sent: clip length, prompt) misbehave; the rest are answered well.
    fault: str | None = None
    fault_when: Callable[[RequestRecord], bool] | None = None
    fail_next: int = 0  # answer this many completions with 500 first, then recover
    received: int = 0  # completion requests that arrived, failed ones included (retries show here)
    records: list[RequestRecord] = field(default_factory=list)
    in_flight: int = 0
    peak_in_flight: int = 0
    busy_seconds: float = 0.0  # wall time with at least one completion in flight (overlaps count once)
    _busy_since: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    _seen: dict[str, Observation] = field(default_factory=dict)

    # --- what tests ask of the record --------------------------------------------------
    @property
    def calls(self) -> list[RequestRecord]:
        return [r for r in self.records if r.status == 200]

    @property
    def longest_clip(self) -> float:
        return max((r.clip_duration or 0.0 for r in self.records), default=0.0)

    @property
    def off_contract(self) -> list[RequestRecord]:
        return [r for r in self.records if r.kind == "off_contract"]

    def reset(self) -> None:
        with self.lock:
            self.records.clear()
            self.peak_in_flight = 0


class _Rejection(Exception):
    def __init__(self, status: int, message: str, kind: str = "BadRequestError") -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind


def _read_video(url: str, state: SimulatorState) -> tuple[bytes, str]:
    if url.startswith("file://"):
        if state.refuse_file_urls:
            raise _Rejection(400, "this server cannot read local files; send the video inline")
        path = Path(urllib.parse.unquote(urllib.parse.urlparse(url).path))
        allowed = state.allowed_media_dir
        if allowed and not path.resolve().is_relative_to(Path(allowed).resolve()):
            raise _Rejection(400, f"Cannot load local files without --allowed-local-media-path covering {path}")
        if not path.is_file():
            raise _Rejection(400, f"video file not found: {path}")
        return path.read_bytes(), "file"
    if url.startswith("data:"):
        header, _, payload = url.partition(",")
        if ";base64" not in header:
            raise _Rejection(400, "data URLs must be base64")
        return base64.b64decode(payload), "base64"
    if url.startswith(("http://127.", "http://localhost")):
        with urllib.request.urlopen(url, timeout=30) as response:  # loopback only
            return response.read(), "http"
    raise _Rejection(400, f"unsupported video url: {url[:40]}")


def _observe(data: bytes, budget: dict, state: SimulatorState) -> Observation:
    fps = float(budget.get("fps", 2.0))
    min_frames = int(budget.get("min_frames", 4))
    max_frames = int(budget.get("max_frames", 240))
    key = hashlib.sha256(data).hexdigest() + f"|{fps}|{min_frames}|{max_frames}"
    with state.lock:
        seen = state._seen.get(key)
    if seen is None:
        seen = look(data, fps=fps, min_frames=min_frames, max_frames=max_frames)
        with state.lock:
            state._seen[key] = seen
    return seen


def _split_content(body: dict) -> tuple[str, str]:
    messages = body.get("messages") or []
    if not messages:
        raise _Rejection(400, "messages must not be empty")
    content = messages[-1].get("content")
    if not isinstance(content, list):
        raise _Rejection(400, "Marlin needs a video: content must be a list with a video_url part")
    video = next((p for p in content if p.get("type") == "video_url"), None)
    text = next((p for p in content if p.get("type") == "text"), None)
    if video is None or text is None:
        raise _Rejection(400, "content needs one video_url part and one text part")
    return video["video_url"]["url"], text["text"]


def complete(body: dict, state: SimulatorState) -> tuple[dict, RequestRecord]:
    if body.get("model") != state.served_model:
        raise _Rejection(404, f"The model `{body.get('model')}` does not exist.", "NotFoundError")
    url, prompt = _split_content(body)
    data, transport = _read_video(url, state)
    budget = body.get("mm_processor_kwargs") or {}
    try:
        observation = _observe(data, budget, state)
    except (av.FFmpegError, IndexError, ValueError) as exc:
        raise _Rejection(400, f"could not decode the video: {exc}") from exc
    kind, event = answers.classify(prompt)
    added = _added_mode(prompt) if kind == "off_contract" else None
    if added is not None:  # a mode another package registers: answered as that mode says a stand-in answers
        mode, arguments = added
        kind, text = mode.name, mode.stand_in(arguments, observation.duration)
    elif observation.scene:
        text = _realistic_answer(kind, event, observation, observation.key)
    elif kind == "caption":
        text = answers.caption_text(observation, varied=state.wording == "varied")
    elif kind == "find":
        text = answers.find_text(observation, event or "")
    else:
        text = answers.off_contract_text(observation)
    if kind == "caption" and state.inject:
        text = answers.with_injection(text, state.inject)
    text = answers.think_preamble(state.think, f"{prompt}|{len(data)}") + text
    max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
    record = RequestRecord(
        kind=kind, prompt=prompt, event=event, temperature=body.get("temperature"),
        max_tokens=max_tokens, transport=transport, clip_duration=observation.duration,
        frames_sampled=observation.frames_sampled, mm_processor_kwargs=budget or None, status=200,
        seen=tuple(track.text for track in observation.tracks),
    )
    reply = {
        "id": f"chatcmpl-{hashlib.sha1(text.encode()).hexdigest()[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": state.served_model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": observation.frames_sampled * 64, "completion_tokens": len(text) // 4,
                  "total_tokens": observation.frames_sampled * 64 + len(text) // 4},
    }
    return reply, record


def _added_mode(prompt: str):
    """The mode an installed package adds that ``prompt`` belongs to, with its arguments (None: no such mode).
    Marlin's own two are answered from the scene above, never from the client's registration."""
    from marlin_agent.marlin.modes import mode_of

    found = mode_of(prompt)
    return found if found is not None and found[0].name not in ("caption", "find") else None


def _realistic_answer(kind: str, event: str | None, observation: Observation, clip_key: str) -> str:
    from evals.synthetic import realistic_answers

    scale = answers.timeline_scale(observation)
    if kind == "caption":
        return realistic_answers.caption_text(observation, clip_key, scale)
    if kind == "find":
        return realistic_answers.find_text(observation, event or "", scale)
    return realistic_answers.off_contract_text(observation)


class _Handler(BaseHTTPRequestHandler):
    server: _SimulatorHTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    def _send(self, status: int, payload: Any, content_type: str = "application/json") -> None:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, kind: str) -> None:
        self._send(status, {"error": {"message": message, "type": kind, "code": status}})

    def _authorised(self) -> bool:
        key = self.server.state.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._error(401, "Incorrect API key provided.", "AuthenticationError")
        return False

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/health":
            self._send(200, b"", "text/plain")
        elif self.path.rstrip("/") == "/v1/models":
            if self._authorised():
                self._send(200, {"object": "list", "data": [
                    {"id": self.server.state.served_model, "object": "model", "owned_by": self.server.state.owned_by}]})
        else:
            self._error(404, f"no route {self.path}", "NotFoundError")

    def do_POST(self) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(404, f"no route {self.path}", "NotFoundError")
            return
        if not self._authorised():
            return
        with state.lock:
            if state.in_flight == 0:
                state._busy_since = time.monotonic()
            state.in_flight += 1
            state.peak_in_flight = max(state.peak_in_flight, state.in_flight)
            state.received += 1
            failing = state.fail_next > 0
            state.fail_next -= 1 if failing else 0
        try:
            self._complete(raw, state, failing)
        finally:
            with state.lock:
                state.in_flight -= 1
                if state.in_flight == 0:
                    state.busy_seconds += time.monotonic() - state._busy_since

    def _complete(self, raw: bytes, state: SimulatorState, failing: bool) -> None:
        if state.fault_when is None and state.fault in _TRANSPORT_FAULTS:
            self._misbehave(state.fault)
            return
        if failing:
            self._misbehave("error500")
            return
        try:
            body = json.loads(raw)
            started = time.monotonic()
            reply, record = complete(body, state)
            time.sleep(max(0.0, state.latency - (time.monotonic() - started)))
        except _Rejection as rejection:
            with state.lock:
                state.records.append(RequestRecord("rejected", "", None, None, None, None, None, None, None,
                                                   rejection.status))
            self._error(rejection.status, rejection.message, rejection.kind)
            return
        except (ValueError, KeyError, TypeError) as exc:
            self._error(400, f"malformed request: {exc}", "BadRequestError")
            return
        if state.fault and (state.fault_when is None or state.fault_when(record)):
            if state.fault in _TRANSPORT_FAULTS:
                self._misbehave(state.fault)
                return
            message = reply["choices"][0]["message"]
            message["content"] = _broken_answer(state.fault, message["content"])
        with state.lock:
            state.records.append(record)
        self._send(200, reply)

    def _misbehave(self, fault: str) -> None:
        if fault == "garbage":
            self._send(200, b"<html><body>It works!</body></html>", "text/html")
        elif fault == "error500":
            self._error(500, "simulated engine failure", "InternalServerError")
        elif fault == "deny_model":
            self._error(403, "Access to model NemoStation/Marlin-2B is restricted.", "PermissionDeniedError")
        elif fault == "hang":
            time.sleep(3600)
        elif fault == "die":
            server = self.server
            threading.Thread(target=lambda: (server.shutdown(), server.server_close()), daemon=True).start()
            self.close_connection = True  # no answer at all: the connection just ends


_TRANSPORT_FAULTS = {"garbage", "error500", "deny_model", "hang", "die"}


def _broken_answer(fault: str, content: str) -> str:
    """A 200 answer that is not a usable caption, the way overloaded or misconfigured servers give them."""
    if fault == "empty":
        return ""
    if fault == "prose":
        return "The video shows a scene with some movement. It is hard to tell exactly what happens."
    if fault == "truncated":
        return content[: max(1, int(len(content) * 0.6))]
    raise ValueError(f"unknown fault {fault!r}")


class _SimulatorHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], state: SimulatorState) -> None:
        super().__init__(address, _Handler)
        self.state = state

    def handle_error(self, request, client_address) -> None:
        # A client that gives up on a request (a cancelled run) is normal, not a server fault.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class MarlinSimulator:
    """Run the simulator on a loopback port in a background thread.

    >>> with MarlinSimulator(api_key="k") as sim:
    ...     sim.base_url  # http://127.0.0.1:PORT/v1
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, **state: Any) -> None:
        self.state = SimulatorState(**state)
        self._server = _SimulatorHTTPServer((host, port), self.state)
        self._thread = threading.Thread(target=self._server.serve_forever, name="marlin-simulator", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> MarlinSimulator:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> MarlinSimulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="Run the Marlin simulator (a test instrument).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--api-key")
    parser.add_argument("--refuse-file-urls", action="store_true")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--think", choices=answers.THINK_MODES, default="mixed")
    parser.add_argument("--wording", choices=("fixed", "varied"), default="varied",
                        help="varied: each clip's captions use their own verbs, as a real captioner's do")
    args = parser.parse_args()
    simulator = MarlinSimulator(args.host, args.port, api_key=args.api_key, refuse_file_urls=args.refuse_file_urls,
                                latency=args.latency, think=args.think,
                                wording=args.wording)
    print(f"Marlin simulator on {simulator.base_url} (synthetic: for tests only)", flush=True)
    try:
        simulator._server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
