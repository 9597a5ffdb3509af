"""Settings come from flags > environment > user config file > shipped defaults."""

import pytest

from marlin_agent.config import load_settings
from marlin_agent.errors import ConfigError


def test_shipped_defaults_name_the_model_and_no_server(tmp_path):
    settings = load_settings(env={"MARLIN_HOME": str(tmp_path)})
    assert settings.server.model == "NemoStation/Marlin-2B"
    assert settings.server.base_url is None
    assert settings.media.chunk_seconds == 60.0
    assert settings.home == tmp_path


def test_user_file_overrides_defaults_and_environment_overrides_the_file(tmp_path):
    (tmp_path / "config.toml").write_text('[server]\nbase_url = "http://file:1/v1"\nmodel = "from-file"\n')
    env = {"MARLIN_HOME": str(tmp_path), "MARLIN_MODEL": "from-env"}
    settings = load_settings(env=env)
    assert settings.server.base_url == "http://file:1/v1"
    assert settings.server.model == "from-env"


def test_a_config_file_from_before_equal_chunks_still_loads(tmp_path):
    (tmp_path / "config.toml").write_text("[media]\nchunk_seconds = 45.0\ntail_merge_seconds = 15.0\n")
    settings = load_settings(env={"MARLIN_HOME": str(tmp_path)})
    assert settings.media.chunk_seconds == 45.0 and not hasattr(settings.media, "tail_merge_seconds")


def test_flags_override_everything_and_none_means_not_given(tmp_path):
    env = {"MARLIN_HOME": str(tmp_path), "MARLIN_BASE_URL": "http://env:1/v1/", "MARLIN_API_KEY": "k"}
    settings = load_settings({"server.base_url": "http://flag:2/v1", "server.model": None}, env=env)
    assert settings.server.base_url == "http://flag:2/v1"
    assert settings.server.model == "NemoStation/Marlin-2B"
    assert settings.server.api_key.get_secret_value() == "k"


def test_the_api_key_never_shows_in_the_settings_repr(tmp_path):
    settings = load_settings(env={"MARLIN_HOME": str(tmp_path), "MARLIN_API_KEY": "very-secret"})
    assert "very-secret" not in repr(settings) and "very-secret" not in settings.model_dump_json()


def test_an_invalid_value_names_the_setting(tmp_path):
    with pytest.raises(ConfigError, match="server.media"):
        load_settings(env={"MARLIN_HOME": str(tmp_path), "MARLIN_MEDIA": "carrier-pigeon"})


def test_a_broken_user_file_is_reported_with_its_path(tmp_path):
    (tmp_path / "config.toml").write_text("[server\n")
    with pytest.raises(ConfigError, match="config.toml"):
        load_settings(env={"MARLIN_HOME": str(tmp_path)})
