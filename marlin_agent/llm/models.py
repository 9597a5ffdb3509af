"""The planner LLM: a pydantic-ai model built from the ``[planner]`` settings.

Model strings follow LiteLLM's "provider/name" style because that is what users already
write. Anything served over the OpenAI chat-completions protocol (a local vLLM or SGLang
Qwen, Ollama, LM Studio, a hosted gateway) goes through pydantic-ai's chat-completions
model — never its Responses model, which those servers lack. Other providers map onto
pydantic-ai's own "provider:name" ids; pydantic-ai-style ids are accepted as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marlin_agent.config import PlannerSettings
from marlin_agent.errors import MissingDependency, PlannerNotConfigured
from marlin_agent.llm.profiles import ProfileBook

# Where what each LLM server accepts is remembered, under $MARLIN_HOME.
PROFILES_FILE = "llm_servers.json"


@dataclass
class LLM:
    """A chat model and what is known of the server behind it.

    ``model`` is any pydantic-ai model (tests hand scripted ones); ``key`` names its server and model in
    ``book``, where what the server and the model accept is kept between requests and runs."""

    model: Any
    book: ProfileBook = field(default_factory=lambda: ProfileBook(None))
    key: str = ""
    base_url: str | None = None

    def __post_init__(self) -> None:
        if not self.key:
            self.key = f"in-process|{self.name}"

    @property
    def name(self) -> str:
        return str(getattr(self.model, "model_name", None) or self.model)


def as_llm(model: Any) -> LLM:
    """``model`` as an ``LLM``: already one, or a bare pydantic-ai model with nothing known of it yet."""
    return model if isinstance(model, LLM) else LLM(model)

# LiteLLM prefixes that mean "an OpenAI-compatible chat-completions server".
OPENAI_COMPATIBLE = {"openai", "hosted_vllm", "vllm", "sglang", "ollama", "ollama_chat", "lm_studio",
                     "custom_openai", "openai_compatible", "text-completion-openai"}
# Where a local server of that kind listens when no base URL is given.
DEFAULT_BASE_URLS = {"ollama": "http://127.0.0.1:11434/v1", "ollama_chat": "http://127.0.0.1:11434/v1",
                     "lm_studio": "http://127.0.0.1:1234/v1"}
OPENAI_API = "https://api.openai.com/v1"
# LiteLLM provider names whose pydantic-ai id differs.
PYDANTIC_AI_PROVIDERS = {"gemini": "google-gla", "vertex_ai": "google-vertex", "together_ai": "together",
                         "fireworks_ai": "fireworks", "azure": "azure"}


def split_model(model: str) -> tuple[str | None, str]:
    """("provider", "name") of a LiteLLM-style string; (None, model) for a bare served name."""
    provider, slash, name = model.partition("/")
    if slash and provider and name and provider.replace("_", "").replace("-", "").isalnum():
        return provider.lower(), name
    return None, model


def planner_llm(settings: PlannerSettings, home: Path | None = None) -> LLM:
    """The configured planner as an ``LLM``; what its server accepts is remembered under ``home``."""
    book = ProfileBook(home / PROFILES_FILE if home is not None else None)
    model = planner_model(settings, book)
    base_url = _served_at(settings)
    key = ProfileBook.key(base_url or "provider", str(getattr(model, "model_name", settings.model)))
    return LLM(model=model, book=book, key=key, base_url=base_url)


def _served_at(settings: PlannerSettings) -> str | None:
    provider, _ = split_model(settings.model.strip())
    if settings.base_url:
        return settings.base_url
    return OPENAI_API if provider == "openai" else DEFAULT_BASE_URLS.get(provider or "")


def planner_model(settings: PlannerSettings, book: ProfileBook | None = None):
    """A pydantic-ai ``Model`` for the configured planner; a clear error when there is none."""
    if not settings.enabled:
        raise PlannerNotConfigured("no planner LLM is configured")
    try:
        import openai  # noqa: F401  (both routes below need the OpenAI SDK or pydantic-ai)
        import pydantic_ai.models  # noqa: F401
    except ImportError as exc:
        raise MissingDependency("the LLM planner", "planner") from exc
    model = settings.model.strip()
    provider, name = split_model(model)
    if settings.base_url:
        if provider is not None and provider not in OPENAI_COMPATIBLE:
            name = model  # a served name that happens to contain a slash, e.g. Qwen/Qwen3-4B
        return _chat_completions(settings, name, settings.base_url, book)
    if provider in DEFAULT_BASE_URLS:
        return _chat_completions(settings, name, DEFAULT_BASE_URLS[provider], book)
    if provider == "openai":
        return _chat_completions(settings, name, None, book)
    if provider in OPENAI_COMPATIBLE:
        raise PlannerNotConfigured(f"{model} names a server of your own, but no planner base URL is set",
                                   hint="Set MARLIN_PLANNER_BASE_URL to its API root, e.g. http://127.0.0.1:8001/v1.")
    if provider is None and ":" not in model:
        raise PlannerNotConfigured(f"the planner model {model!r} names no provider and no server")
    return _inferred(model, model if provider is None else f"{PYDANTIC_AI_PROVIDERS.get(provider, provider)}:{name}")


def _chat_completions(settings: PlannerSettings, name: str, base_url: str | None, book: ProfileBook | None):
    """A model behind an OpenAI-compatible chat completions API, its requests written in the forms its
    server accepts (``transport``)."""
    import httpx
    from openai import AsyncOpenAI, OpenAIError
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from marlin_agent.llm.transport import AccentTransport

    key = settings.api_key.get_secret_value() if settings.api_key else None
    address = base_url or OPENAI_API
    transport = AccentTransport(book or ProfileBook(None), ProfileBook.key(address, name), address)
    try:
        # A local server accepts any key, but the OpenAI client insists on having one.
        client = AsyncOpenAI(base_url=base_url, api_key=key or ("not-needed" if base_url else None),
                             timeout=settings.request_timeout, max_retries=1,
                             http_client=httpx.AsyncClient(transport=transport, timeout=settings.request_timeout))
    except OpenAIError as exc:
        raise PlannerNotConfigured(f"{settings.model.strip()} needs an API key: {exc}",
                                   hint="Set OPENAI_API_KEY or MARLIN_PLANNER_API_KEY.") from exc
    return OpenAIChatModel(name, provider=OpenAIProvider(openai_client=client))


def _inferred(model: str, target: str):
    """A model pydantic-ai knows by ``provider:name``."""
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models import infer_model

    try:
        return infer_model(target)
    except ImportError as exc:
        family = target.split(":", 1)[0]
        raise PlannerNotConfigured(f"the planner model {model} needs pydantic-ai's {family} support",
                                   hint=f"pip install 'pydantic-ai-slim[{family}]'") from exc
    except UserError as exc:
        raise PlannerNotConfigured(f"cannot use the planner model {model!r}: {exc}") from exc
