"""Recognise OpenAI-compatible servers that cannot take video, to say so plainly.

Ollama, llama.cpp, LM Studio and TGI all speak ``/v1/chat/completions`` but accept no
video input; each has a native endpoint of its own that identifies it.
"""

from __future__ import annotations

# (engine name, native path, a key its JSON answer carries)
_SIGNATURES = (
    ("Ollama", "/api/version", "version"),
    ("llama.cpp", "/props", "default_generation_settings"),
    ("LM Studio", "/api/v0/models", "data"),
    ("TGI", "/info", "model_id"),
)


def server_root(base_url: str) -> str:
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def detect_non_video_engine(base_url: str, timeout: float = 3.0) -> str | None:
    """The name of a known video-less engine at ``base_url``, or ``None``."""
    import httpx  # only asked after a server refused video, so not imported with the client

    root = server_root(base_url)
    with httpx.Client(timeout=timeout) as http:
        for name, path, key in _SIGNATURES:
            try:
                response = http.get(root + path)
                if response.status_code == 200 and key in response.json():
                    return name
            except (httpx.HTTPError, ValueError):
                continue
    return None
