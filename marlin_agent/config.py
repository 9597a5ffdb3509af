"""Settings: one typed object, built once at a front door and passed down.

Precedence, highest first: explicit overrides (CLI flags) > environment variables >
the user's ``$MARLIN_HOME/config.toml`` and ``credentials.toml`` (keys, mode 0600) >
the shipped ``configs/default.toml``.
This is the only module that reads the environment.
"""

from __future__ import annotations

import os
import re
import tomllib
import urllib.parse
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from marlin_agent.errors import ConfigError
from marlin_agent.redaction import remember
from marlin_agent.resources import data_path

MediaTransport = Literal["auto", "file", "base64"]
# What a planner LLM's verdict on a span (the judge) may do to a confidence: nothing (it is not asked), only lower
# it, lower it or lift it, or only lift it (see marlin_agent/verification/verifier.py).
JudgeRule = Literal["off", "lowers", "lifts", "only-lifts"]
# API keys that `setup` stores live apart from config.toml, readable by the user only.
CREDENTIALS_FILE = "credentials.toml"


class ServerSettings(BaseModel):
    """How to reach Marlin and how to ask it."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    api_key: SecretStr | None = None
    model: str = "NemoStation/Marlin-2B"
    media: MediaTransport = "auto"
    request_timeout: float | None = Field(None, gt=0, description="Unset: scaled to each clip.")
    max_retries: int = Field(3, ge=0)
    concurrency: int = Field(8, ge=1)
    caption_max_tokens: int = Field(1024, ge=16)
    find_max_tokens: int = Field(64, ge=8)
    send_video_budget: bool = True
    sample_fps: float = Field(2.0, gt=0)
    min_frames: int = Field(4, ge=1)
    max_frames: int = Field(240, ge=1)
    max_pixels: int = Field(200_704, ge=28 * 28)

    @field_validator("base_url")
    @classmethod
    def _strip_slash(cls, value: str | None) -> str | None:
        return value.rstrip("/") if value else None


class MediaSettings(BaseModel):
    """How footage is cut and staged for the server."""

    model_config = ConfigDict(extra="forbid")

    # The longest clip ever sent; a video is cut into equal chunks no longer than this.
    chunk_seconds: float = Field(60.0, ge=5)
    stage_fps: float = Field(2.0, gt=0, le=30)
    # The staged clips kept for reuse, at most this many GB (least recently used go first; 0: no limit).
    clip_cache_gb: float = Field(4.0, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _retired_keys(cls, value: object) -> object:
        # Config files from before equal chunks may still set this; it no longer means anything.
        if isinstance(value, dict) and "tail_merge_seconds" in value:
            value = {k: v for k, v in value.items() if k != "tail_merge_seconds"}
        return value


class LibrarySettings(BaseModel):
    """Where the index lives and which models fill it."""

    model_config = ConfigDict(extra="forbid")

    db: str = ""
    store: str = "lance"  # which store keeps it (library.stores): lance, memory, or one a package adds
    embed_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    whisper_model: str = "auto"
    transcribe: bool = True
    lock_wait: float = Field(600.0, ge=0)
    # Folders every indexed file must really lie in (symlinks resolved); empty: anywhere. The MCP
    # server sets its roots here, so a link inside a root cannot bring in footage from outside it.
    confine_to: list[str] = []
    # Whether URLs may lead to this machine or its private networks. The MCP server turns this off
    # for its callers (unless [mcp] allow_private_urls): an agent's URL is not the user's.
    internal_urls: bool = True
    # Where the embedding and verification models' optimised graphs are kept (empty: the cache).
    graph_cache: str = ""


class AgentSettings(BaseModel):
    """How questions are answered."""

    model_config = ConfigDict(extra="forbid")

    threshold: float | None = Field(None, ge=0, le=1, description="Confidence a moment needs; unset: the "
                                    "calibration's for the entailment model in use (configs/calibrations.toml).")
    max_windows: int = Field(4, ge=1, le=50)


class VerifySettings(BaseModel):
    """How a grounded span is checked: the entailment model, the evidence gathered, and the
    weights that turn it into a confidence (calibrated with `eval presence --fit`)."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field("cross-encoder/nli-deberta-v3-xsmall", description="An NLI model: hub name or local folder.")
    model_file: str = Field("onnx/model_quint8_avx2.onnx", description="The ONNX file taken from a hub model.")
    wordnet: str = Field("auto", description="WordNet 3.0's dict folder for the lexical signal; auto: the cache, "
                         "the system's copy, else one download.")
    fresh_caption: bool = True
    reground: bool = False
    journal: str | None = Field(None, description="A file to append every verification read to (its texts and "
                                "what the signals found), for replaying verification offline (evals.replay).")
    weights: dict[str, float] = Field(default_factory=dict)
    bias: float = 0.0
    judge: JudgeRule = Field("only-lifts", description="What the planner LLM's verdict may do to a confidence: "
                             "nothing (it is not asked), only lower it, lower it or lift it, or only lift it; it "
                             "lifts only where a description already reads like the event and no text spoke to "
                             "its reader.")


class PlannerSettings(BaseModel):
    """The optional planner LLM: the LLM planner's model, and the judge in verification."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field("pipeline", description='"pipeline" (no LLM), a LiteLLM-style "provider/name", '
                       'or a bare name served at base_url.')
    base_url: str | None = None
    api_key: SecretStr | None = None
    max_requests: int = Field(16, ge=1)
    max_tokens: int = Field(120_000, ge=1000)
    max_marlin_calls: int = Field(40, ge=1)
    request_timeout: float = Field(120.0, gt=0)

    @property
    def enabled(self) -> bool:
        return self.model.strip().lower() not in ("", "pipeline", "none")


def _split_paths(value: Any) -> Any:
    """An environment variable holds a list as os.pathsep-separated text."""
    if isinstance(value, str):
        return [part for part in value.split(os.pathsep) if part.strip()]
    return value


class McpSettings(BaseModel):
    """The MCP server: what it may touch and how long one call may take."""

    model_config = ConfigDict(extra="forbid")

    roots: list[str] = Field(default_factory=list, description="Folders tools may read and write; "
                             "empty means the folder the server was started in.")
    allow_urls: bool = True
    allow_private_urls: bool = Field(False, description="Let callers' URLs reach loopback, private, link-local "
                                     "and multicast addresses (footage on your own network).")
    call_seconds: float = Field(240.0, gt=0)

    _split = field_validator("roots", mode="before")(_split_paths)


class ServeSettings(BaseModel):
    """`marlin-agent serve`: where it listens and the token a caller from another machine must give."""

    model_config = ConfigDict(extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    # Written once into credentials.toml (0600) by the first `serve --host` that is not loopback.
    token: SecretStr | None = None


class WatchSettings(BaseModel):
    """Standing questions (`watch`): how new footage is noticed, recorded, kept and alerted on."""

    model_config = ConfigDict(extra="forbid")

    poll_seconds: float = Field(1.0, gt=0, description="How often a watched folder is listed.")
    settle_seconds: float = Field(3.0, ge=0, description="A file counts once its size and time have not changed "
                                  "for this long (a camera or a copy may still be writing it).")
    recordings: str = Field("", description="Where live streams are recorded; empty: $MARLIN_HOME/watch.")
    retention_hours: float = Field(24.0, ge=0, description="Recorded segments older than this are deleted once "
                                   "judged, and forgotten by the index (0: keep every recording).")
    cooldown_seconds: float = Field(0.0, ge=0, description="After an alert, the same question stays quiet on the "
                                    "same footage for this long.")
    join_seconds: float = Field(2.0, ge=0, description="Moments closer than this are one occurrence (an event "
                                "running across two segments is one alert).")
    reconnect_max_seconds: float = Field(30.0, gt=0, description="The longest wait between tries to reopen a "
                                         "dropped stream.")
    stream_timeout: float = Field(15.0, gt=0, description="Seconds a stream may send nothing before it counts as "
                                  "dropped.")
    notify_retries: int = Field(3, ge=0, description="Failed tries of a delivery, after the first, before the "
                                "watch says that its target is failing (it goes on trying).")
    notify_timeout: float = Field(10.0, gt=0, description="Seconds one try of a delivery may take.")
    retry_max_seconds: float = Field(300.0, gt=0, description="The longest wait between two tries of a delivery.")
    give_up_hours: float = Field(24.0, gt=0, description="A delivery still failing this long after its alert was "
                                 "raised is given up (failed, with the last error).")
    give_up_hours_by_target: dict[str, float] = Field(default_factory=dict, description="give_up_hours for one "
                                                      "target, keyed by the target as written on --notify.")
    # Values for ${NAME} in notify targets, kept in credentials.toml ([watch.secrets]); the environment is
    # asked next. A secret never has to be typed on a command line (or land in its history).
    secrets: dict[str, SecretStr] = Field(default_factory=dict)




class EngineSettings(BaseModel):
    """Local engines that marlin-agent installs and runs itself under $MARLIN_HOME/engines."""

    model_config = ConfigDict(extra="forbid")

    default: str | None = None  # an engine's name: vllm, sglang, mlx, cpu or one a package adds
    auto_start: bool = True
    check_platform: bool = True
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    start_timeout: float = Field(1800.0, gt=0)
    max_model_len: int = Field(65536, ge=4096)
    extra_args: list[str] = Field(default_factory=list)
    requirements: dict[str, list[str]] = Field(default_factory=dict)
    sources: dict[str, str] = Field(default_factory=dict)
    # A small chat LLM the same engine serves beside Marlin (`setup --local ENGINE --planner MODEL`):
    # the planner, and the judge in verification. On a GPU the two share its memory, the planner
    # taking this share and Marlin the rest of what the engine would use alone.
    planner_model: str | None = None
    planner_port: int | None = Field(None, ge=1, le=65535)  # default: the port after Marlin's
    planner_gpu_share: float = Field(0.3, gt=0.05, lt=0.8)
    planner_max_model_len: int = Field(32768, ge=4096)
    planner_extra_args: list[str] = Field(default_factory=list)


class Settings(BaseSettings):
    """Every setting, from every layer; ``load_settings`` is how to build one."""

    # Sources come from ``settings_customise_sources`` only: the default environment source
    # would read $HOME into ``home``.
    model_config = SettingsConfigDict(extra="forbid")

    home: Path
    server: ServerSettings = ServerSettings()
    media: MediaSettings = MediaSettings()
    library: LibrarySettings = LibrarySettings()
    agent: AgentSettings = AgentSettings()
    verify: VerifySettings = VerifySettings()
    planner: PlannerSettings = PlannerSettings()
    mcp: McpSettings = McpSettings()
    serve: ServeSettings = ServeSettings()
    engine: EngineSettings = EngineSettings()
    watch: WatchSettings = WatchSettings()

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings) -> tuple[PydanticBaseSettingsSource, ...]:
        """Highest first: flags, MARLIN_* variables, credentials.toml, config.toml, the shipped defaults."""
        layers = _LAYERS.get() or _Layers(os.environ, default_home(os.environ))
        return (
            init_settings,
            _Environment(settings_cls, layers.env),
            _TomlFile(settings_cls, layers.home / CREDENTIALS_FILE),
            _TomlFile(settings_cls, layers.home / "config.toml"),
            _TomlFile(settings_cls, data_path("configs/default.toml")),
        )

    @property
    def db_path(self) -> str:
        """A folder, or any URI LanceDB takes (s3://, gs://, memory://)."""
        return self.library.db or str(self.home / "index")

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    @property
    def graphs_dir(self) -> Path:
        """Optimised ONNX graphs of the small models, written once and loaded as they are (onnx_session)."""
        return Path(self.library.graph_cache).expanduser() if self.library.graph_cache else self.cache_dir / "onnx"

    @property
    def watch_dir(self) -> Path:
        """Recorded streams, alert clips and alert logs of standing questions."""
        return Path(self.watch.recordings).expanduser() if self.watch.recordings else self.home / "watch"

    @property
    def user_config_path(self) -> Path:
        return self.home / "config.toml"

    @property
    def credentials_path(self) -> Path:
        return self.home / CREDENTIALS_FILE


# Environment variable -> (section, key). DESIGN.md names these.
ENVIRONMENT: dict[str, tuple[str, str]] = {
    "MARLIN_BASE_URL": ("server", "base_url"),
    "MARLIN_API_KEY": ("server", "api_key"),
    "MARLIN_MODEL": ("server", "model"),
    "MARLIN_MEDIA": ("server", "media"),
    "MARLIN_TIMEOUT": ("server", "request_timeout"),
    "MARLIN_PLANNER": ("planner", "model"),
    "MARLIN_PLANNER_BASE_URL": ("planner", "base_url"),
    "MARLIN_PLANNER_API_KEY": ("planner", "api_key"),
    "MARLIN_DB": ("library", "db"),
    "MARLIN_EMBED_MODEL": ("library", "embed_model"),
    "MARLIN_WHISPER_MODEL": ("library", "whisper_model"),
    "MARLIN_GRAPH_CACHE": ("library", "graph_cache"),
    "MARLIN_VERIFY_MODEL": ("verify", "model"),
    "MARLIN_WORDNET": ("verify", "wordnet"),
    "MARLIN_VERIFY_JOURNAL": ("verify", "journal"),
    "MARLIN_MCP_ROOTS": ("mcp", "roots"),
    "MARLIN_ENGINE": ("engine", "default"),
}


# The variables that name a model's folder. Set in a user's shell, they do not reach a front door started
# without it (an MCP host, a service): ``models pull`` and ``setup`` write them into the config file.
MODEL_FOLDER_VARIABLES = ("MARLIN_EMBED_MODEL", "MARLIN_WHISPER_MODEL", "MARLIN_VERIFY_MODEL", "MARLIN_WORDNET")


def model_folders_from_environment(env: Mapping[str, str] | None = None) -> dict[str, dict[str, str]]:
    """{section: {key: folder}} for each of ``MODEL_FOLDER_VARIABLES`` set to a folder on this machine."""
    env = os.environ if env is None else env
    found: dict[str, dict[str, str]] = {}
    for name in MODEL_FOLDER_VARIABLES:
        value = env.get(name)
        if value and Path(value).expanduser().is_dir():
            section, key = ENVIRONMENT[name]
            found.setdefault(section, {})[key] = str(Path(value).expanduser().resolve())
    return found


_SECRET = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def secret_names(text: str) -> list[str]:
    """The ``${NAME}`` placeholders in ``text``."""
    return _SECRET.findall(text)


def expand_secrets(text: str, settings: Settings, env: Mapping[str, str] | None = None) -> str:
    """``text`` with each ``${NAME}`` filled from ``[watch.secrets]`` (credentials.toml), else the
    environment; a name found in neither is a ConfigError that names it (never sent as it stands)."""
    env = os.environ if env is None else env

    def value(match: re.Match) -> str:
        name = match.group(1)
        if name in settings.watch.secrets:
            return settings.watch.secrets[name].get_secret_value()
        if env.get(name):
            remember(env[name], name)  # from here on, no text that leaves shows it
            return env[name]
        raise ConfigError(f"no value for ${{{name}}}",
                          hint=f"Set it under [watch.secrets] in {settings.credentials_path}, or export {name}.")

    return _SECRET.sub(value, text)


def refuse_written_password(url: str, what: str, example: str) -> None:
    """A password in ``url`` must be a ``${NAME}``: written out, it would sit in the shell's history, the
    process list and a watch's stored state."""
    password = urllib.parse.urlsplit(url).password
    if password and not secret_names(urllib.parse.unquote(password)):
        raise ConfigError(f"{what} password was written on the command line",
                          hint=f"Put it in credentials.toml under [watch.secrets] (or the environment) and write "
                               f"{example} instead.")


def default_home(env: Mapping[str, str]) -> Path:
    if env.get("MARLIN_HOME"):
        return Path(env["MARLIN_HOME"]).expanduser()
    return Path("~/.marlin").expanduser()


class _Layers(NamedTuple):
    env: Mapping[str, str]
    home: Path


# The environment and home of the ``load_settings`` call under way (pydantic-settings picks
# sources per class, so the call's own env mapping reaches them through here).
_LAYERS: ContextVar[_Layers | None] = ContextVar("marlin_settings_layers", default=None)


class _TomlFile(TomlConfigSettingsSource):
    """One TOML layer; a file that is not valid TOML is a ConfigError naming it."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        try:
            super().__init__(settings_cls, path)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path} is not valid TOML: {exc}", hint=f"Fix or delete {path}.") from exc


class _Environment(PydanticBaseSettingsSource):
    """The MARLIN_* variables of ``ENVIRONMENT``, each onto its section and key; empty means unset."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self.env = env

    def get_field_value(self, field, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # values come whole from __call__

    def __call__(self) -> dict[str, Any]:
        nested: dict[str, Any] = {}
        for name, (section, key) in ENVIRONMENT.items():
            if self.env.get(name):
                nested.setdefault(section, {})[key] = self.env[name]
        return nested


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Turn {"server.model": x} into {"server": {"model": x}}."""
    nested: dict[str, Any] = {}
    for dotted, value in flat.items():
        if value is None:
            continue
        section, _, key = dotted.partition(".")
        if key:
            nested.setdefault(section, {})[key] = value
        else:
            nested[section] = value
    return nested


# The flags a front door takes for settings, by their one spelling: the CLI's server flags and the
# Python API's keyword arguments are both read from here.
FLAG_SETTINGS: dict[str, str] = {
    "base_url": "server.base_url", "api_key": "server.api_key", "model": "server.model", "media": "server.media",
    "concurrency": "server.concurrency", "timeout": "server.request_timeout", "chunk_seconds": "media.chunk_seconds",
    "db": "library.db", "transcribe": "library.transcribe", "threshold": "agent.threshold",
    "planner": "planner.model", "planner_base_url": "planner.base_url", "planner_api_key": "planner.api_key",
}


def with_values(settings: Settings, values: Mapping[str, Any]) -> Settings:
    """``settings`` with dotted keys replaced (``None`` leaves a key as it is), each section validated again."""
    for dotted, value in values.items():
        if value is not None:
            section, key = dotted.split(".")
            part = getattr(settings, section).model_copy(update={key: value})
            try:
                part = type(part).model_validate(part.model_dump())
            except ValidationError as exc:
                problems = "; ".join(err["msg"] for err in exc.errors())
                raise ConfigError(f"invalid {dotted}: {problems}") from None
            settings = settings.model_copy(update={section: part})
    return settings


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Build the settings from every layer.

    ``overrides`` uses dotted keys (``{"server.base_url": ...}``); ``None`` values mean
    "not given" so a CLI can pass every flag through unchanged.
    """
    env = os.environ if env is None else env
    home = default_home(env)
    flags = _nest(overrides or {})
    flags.setdefault("home", home)
    token = _LAYERS.set(_Layers(env, home))
    try:
        settings = Settings(**flags)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(
            f"invalid settings: {problems}",
            hint=f"Check the flags, the MARLIN_* environment variables and {home / 'config.toml'}.",
        ) from exc
    finally:
        _LAYERS.reset(token)
    _remember_secrets(settings)
    return settings


def _remember_secrets(settings: Settings) -> None:
    """Every key and ``[watch.secrets]`` value of ``settings``: never shown by anything that leaves."""
    for key in (settings.server.api_key, settings.planner.api_key, settings.serve.token):
        remember(key.get_secret_value() if key else None)
    for name, value in settings.watch.secrets.items():
        remember(value.get_secret_value(), name)
