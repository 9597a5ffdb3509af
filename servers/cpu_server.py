"""Marlin on the CPU: transformers behind the OpenAI-compatible chat-completions API.

For machines with neither an NVIDIA GPU nor Apple Silicon. It runs the model card's
reference path (the transformers Qwen3.5 implementation, selected by model type, which is
the architecture override the GPU engines take as a flag), one request at a time. It is
slow, minutes per minute of footage, and says so at start-up; but it answers.

This file runs inside the CPU engine's own environment and imports nothing from
marlin-agent. Frames are sampled, resized and normalised here with PyAV, Pillow and numpy
(the training-time budget: 2 fps, 4 to 240 frames, at most 200,704 pixels per frame), and
handed to the checkpoint's own video processor only for patching, so torchvision, whose
PyPI builds do not match the CPU build of torch on Linux, is never needed.

With ``--chat`` it serves a text chat model instead (the planner LLM beside Marlin): the
checkpoint's own chat template renders the messages and the tools, and tool calls in the
Qwen family's format (``<tool_call>{"name": …, "arguments": …}</tool_call>``) come back as
OpenAI ``tool_calls``, as vLLM's hermes parser returns them.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import math
import re
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import av
import numpy as np
import torch
from PIL import Image

DEFAULT_BUDGET = {"fps": 2.0, "min_frames": 4, "max_frames": 240, "max_pixels": 200_704}


class BadRequest(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


# --- video ------------------------------------------------------------------------------


def read_video(url: str, allowed: Path | None) -> bytes:
    if url.startswith("file://"):
        path = Path(urllib.parse.unquote(urllib.parse.urlparse(url).path)).resolve()
        if allowed is None or not path.is_relative_to(allowed):
            raise BadRequest(f"cannot read local files outside --allowed-local-media-path: {path}")
        if not path.is_file():
            raise BadRequest(f"video file not found: {path}")
        return path.read_bytes()
    if url.startswith("data:"):
        header, _, payload = url.partition(",")
        if ";base64" not in header:
            raise BadRequest("data: URLs must be base64")
        return base64.b64decode(payload)
    if url.startswith(("http://", "https://")):
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.read()
    raise BadRequest(f"unsupported video URL: {url[:40]}")


def sample_frames(data: bytes, fps: float, min_frames: int, max_frames: int) -> tuple[list[np.ndarray], list[float]]:
    """Frames at ``fps`` (clamped to min..max frames, an even count), and their times in seconds."""
    try:
        with av.open(io.BytesIO(data)) as container:
            stream = container.streams.video[0]
            decoded = [(float(frame.time or 0.0), frame.to_ndarray(format="rgb24"))
                       for frame in container.decode(stream)]
    except (av.FFmpegError, IndexError) as exc:
        raise BadRequest(f"the video cannot be decoded: {exc}") from exc
    if not decoded:
        raise BadRequest("the video has no frames")
    duration = decoded[-1][0] + (decoded[-1][0] - decoded[0][0]) / max(1, len(decoded) - 1)
    wanted = min(max_frames, max(min_frames, math.ceil(duration * fps)))
    wanted += wanted % 2
    picks = np.linspace(0, len(decoded) - 1, wanted).round().astype(int)
    return [decoded[i][1] for i in picks], [decoded[i][0] for i in picks]


def prepare(frames: list[np.ndarray], processor, budget: dict) -> torch.Tensor:
    """Resize within the pixel budget (dimensions divisible by patch x merge) and normalise."""
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import smart_resize

    factor = processor.patch_size * processor.merge_size
    height, width = frames[0].shape[:2]
    size = budget.get("size") or {}
    longest = size.get("longest_edge") or len(frames) * DEFAULT_BUDGET["max_pixels"]
    shortest = size.get("shortest_edge") or 4096
    new_h, new_w = smart_resize(len(frames), height, width, temporal_factor=processor.temporal_patch_size,
                                factor=factor, min_pixels=shortest, max_pixels=longest)
    resized = np.stack([np.asarray(Image.fromarray(f).resize((new_w, new_h), Image.BICUBIC)) for f in frames])
    scaled = resized.astype(np.float32) / 255.0
    mean, std = np.asarray(processor.image_mean, np.float32), np.asarray(processor.image_std, np.float32)
    return torch.from_numpy(((scaled - mean) / std).transpose(0, 3, 1, 2).copy())  # T, C, H, W


# --- the model --------------------------------------------------------------------------


class Engine:
    def __init__(self, model: str, dtype: str, threads: int | None) -> None:
        from transformers import AutoModelForImageTextToText, AutoTokenizer
        from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

        if threads:
            torch.set_num_threads(threads)
        log(f"loading {model} on the CPU ({dtype}); this engine is slow: expect minutes per minute of footage")
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.processor = Qwen3VLVideoProcessor.from_pretrained(model)
        # The checkpoint names a custom class; its model type selects transformers' own Qwen3.5 code.
        self.model = AutoModelForImageTextToText.from_pretrained(model, dtype=getattr(torch, dtype)).eval()
        self.video_token = "<|video_pad|>"
        self.video_token_id = self.tokenizer.convert_tokens_to_ids(self.video_token)
        self.lock = threading.Lock()

    def _prompt(self, text: str, grid: list[int], times: list[float]) -> str:
        chat = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": text}]}]
        rendered = self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        # One group of frames per temporal patch, each labelled with its mean time, as the processor does.
        step = self.processor.temporal_patch_size
        padded = times + [times[-1]] * (-len(times) % step)
        stamps = [sum(padded[i:i + step]) / step for i in range(0, len(padded), step)]
        per_frame = grid[1] * grid[2] // self.processor.merge_size**2
        expansion = "".join(f"<{stamp:.1f} seconds><|vision_start|>{self.video_token * per_frame}<|vision_end|>"
                            for stamp in stamps[: grid[0]])
        return rendered.replace(self.video_token, expansion, 1)

    def complete(self, video: bytes, text: str, budget: dict, max_tokens: int) -> tuple[str, int, int]:
        fps = float(budget.get("fps") or DEFAULT_BUDGET["fps"])
        frames, times = sample_frames(video, fps, int(budget.get("min_frames") or DEFAULT_BUDGET["min_frames"]),
                                      int(budget.get("max_frames") or DEFAULT_BUDGET["max_frames"]))
        pixels = prepare(frames, self.processor, budget)
        start = times[0]
        times = [t - start for t in times]
        patched = self.processor(videos=[pixels], do_resize=False, do_convert_rgb=False, do_rescale=False,
                                 do_normalize=False, do_sample_frames=False, return_tensors="pt")
        grid = patched["video_grid_thw"][0].tolist()
        inputs = self.tokenizer(self._prompt(text, grid, times), return_tensors="pt")
        mm_types = (inputs["input_ids"] == self.video_token_id).long() * 2  # 2 marks video tokens
        with self.lock, torch.inference_mode():
            output = self.model.generate(**inputs, mm_token_type_ids=mm_types,
                                         pixel_values_videos=patched["pixel_values_videos"].to(self.model.dtype),
                                         video_grid_thw=patched["video_grid_thw"], max_new_tokens=max_tokens,
                                         do_sample=False)
        new = output[0, inputs["input_ids"].shape[1]:]
        return self.tokenizer.decode(new, skip_special_tokens=True), int(inputs["input_ids"].shape[1]), int(len(new))


class ChatEngine:
    """A text chat model for the planner and the judge: messages and tools in, text or tool calls out."""

    def __init__(self, model: str, dtype: str, threads: int | None) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if threads:
            torch.set_num_threads(threads)
        log(f"loading {model} on the CPU ({dtype}) as a chat model")
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.model = AutoModelForCausalLM.from_pretrained(model, dtype=getattr(torch, dtype)).eval()
        self.lock = threading.Lock()

    def prompt(self, messages: list[dict], tools: list[dict]) -> str:
        return self.tokenizer.apply_chat_template([chat_message(m) for m in messages], tools=tools or None,
                                                  tokenize=False, add_generation_prompt=True)

    def generate(self, prompt: str, max_tokens: int) -> tuple[str, int, int]:
        inputs = self.tokenizer(prompt, return_tensors="pt")
        with self.lock, torch.inference_mode():
            output = self.model.generate(**inputs, max_new_tokens=max_tokens, do_sample=False)
        new = output[0, inputs["input_ids"].shape[1]:]
        return self.tokenizer.decode(new, skip_special_tokens=True), int(inputs["input_ids"].shape[1]), int(len(new))

    def complete(self, messages: list[dict], tools: list[dict], max_tokens: int) -> tuple[dict, int, int]:
        text, prompt_tokens, completion_tokens = self.generate(self.prompt(messages, tools), max_tokens)
        content, calls = split_tool_calls(text) if tools else (text.strip(), [])
        message: dict = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = calls
        return message, prompt_tokens, completion_tokens


def chat_message(message: dict) -> dict:
    """An OpenAI chat message as chat templates take it: text content, tool-call arguments as objects."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    out = {"role": message["role"], "content": content or ""}
    if message.get("tool_calls"):
        out["tool_calls"] = [{"type": "function", "function": {
            "name": call["function"]["name"], "arguments": json.loads(call["function"].get("arguments") or "{}")}}
            for call in message["tool_calls"]]
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    return out


_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


def split_tool_calls(text: str) -> tuple[str, list[dict]]:
    """The text outside ``<tool_call>`` blocks, and the blocks as OpenAI tool calls (a block that is
    not a JSON object with a name stays in the text, for the client to see and retry)."""
    calls: list[dict] = []

    def take(match: re.Match) -> str:
        try:
            found = json.loads(match.group(1))
        except ValueError:
            return match.group(0)
        if not isinstance(found, dict) or not isinstance(found.get("name"), str):
            return match.group(0)
        arguments = found.get("arguments", found.get("parameters", {}))
        calls.append({"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function", "function": {
            "name": found["name"], "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}})
        return ""

    rest = _TOOL_CALL.sub(take, text)
    return rest.strip(), calls


# --- HTTP -------------------------------------------------------------------------------


def split_request(body: dict) -> tuple[str, str]:
    messages = body.get("messages") or []
    if len(messages) != 1 or messages[0].get("role") != "user" or not isinstance(messages[0].get("content"), list):
        raise BadRequest("expected one user message with a video and a text part")
    url = text = None
    for part in messages[0]["content"]:
        if part.get("type") == "video_url":
            url = part["video_url"]["url"]
        elif part.get("type") == "text":
            text = part["text"]
    if not url or text is None:
        raise BadRequest("the message needs a video_url part and a text part")
    return url, text


class Handler(BaseHTTPRequestHandler):
    server: "CpuServer"

    def log_message(self, format: str, *args) -> None:
        log(format % args)

    def _send(self, status: int, payload: dict | bytes) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if not isinstance(payload, bytes) else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error": {"message": message, "type": "BadRequestError" if status == 400 else "Error",
                                      "code": status}})

    def do_GET(self) -> None:
        path = self.path.rstrip("/")
        if path == "/health":
            self._send(200, b"")
        elif path == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": self.server.served_name, "object": "model",
                                                         "owned_by": "marlin-agent-cpu"}]})
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(404, f"no route {self.path}")
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            if body.get("model") != self.server.served_name:
                raise BadRequest(f"The model `{body.get('model')}` does not exist.", 404)
            if isinstance(self.server.engine, ChatEngine):
                self._chat(body)
                return
            url, text = split_request(body)
            budget = body.get("mm_processor_kwargs") or {}
            started = time.monotonic()
            video = read_video(url, self.server.allowed)
            answer, prompt_tokens, completion_tokens = self.server.engine.complete(
                video, text, budget, int(body.get("max_tokens") or 1024))
            log(f"answered in {time.monotonic() - started:.1f} s ({prompt_tokens} prompt tokens)")
        except BadRequest as exc:
            self._error(exc.status, str(exc))
            return
        except (ValueError, KeyError, TypeError) as exc:
            self._error(400, f"malformed request: {exc}")
            return
        self._send(200, _reply(self.server.served_name, {"role": "assistant", "content": answer}, prompt_tokens,
                               completion_tokens))

    def _chat(self, body: dict) -> None:
        messages = body.get("messages") or []
        if not messages:
            raise BadRequest("messages must not be empty")
        started = time.monotonic()
        message, prompt_tokens, completion_tokens = self.server.engine.complete(
            messages, body.get("tools") or [], int(body.get("max_tokens") or body.get("max_completion_tokens") or 1024))
        log(f"answered in {time.monotonic() - started:.1f} s ({prompt_tokens} prompt tokens)")
        self._send(200, _reply(self.server.served_name, message, prompt_tokens, completion_tokens))


def _reply(served: str, message: dict, prompt_tokens: int, completion_tokens: int) -> dict:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
        "model": served, "choices": [{"index": 0, "message": message,
                                      "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


class CpuServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, engine: Engine | ChatEngine, served_name: str, allowed: Path | None) -> None:
        super().__init__(address, Handler)
        self.engine, self.served_name, self.allowed = engine, served_name, allowed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve Marlin-2B on the CPU with transformers (slow).")
    parser.add_argument("--model", required=True, help="A hub id or a local checkpoint folder.")
    parser.add_argument("--served-model-name", help="The name clients use (default: --model).")
    parser.add_argument("--allowed-local-media-path", type=Path, help="file:// videos are read only under it.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--threads", type=int)
    parser.add_argument("--chat", action="store_true", help="Serve a text chat model (the planner), not Marlin.")
    args = parser.parse_args(argv)
    engine = (ChatEngine if args.chat else Engine)(args.model, args.dtype, args.threads)
    allowed = args.allowed_local_media_path.resolve() if args.allowed_local_media_path else None
    server = CpuServer((args.host, args.port), engine, args.served_model_name or args.model, allowed)
    log(f"serving {server.served_name} on http://{args.host}:{args.port}/v1 (CPU, one request at a time)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
