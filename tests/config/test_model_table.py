"""The user config's `model` table, read for `mcpyard chat` (MOD-3, CFG-8): valid alone, the key by secret name."""

from __future__ import annotations

import pytest

from mcpyard.config import ModelSettings
from mcpyard.errors import ConfigError

from ._support import Setup


def test_mod3_a_user_config_holding_only_the_model_table_is_valid(cfg: Setup) -> None:
    cfg.user('[model]\nbase_url = "http://127.0.0.1:11434/v1"\nmodel = "llama3"\napi_key = "${secret:OLLAMA}"\n')
    loaded = cfg.load()
    assert loaded.servers == ()
    assert loaded.settings.model == ModelSettings(
        base_url="http://127.0.0.1:11434/v1", model="llama3", api_key_secret="OLLAMA", provider=None
    )


def test_mod3_the_flag_files_model_fields_come_before_the_user_configs(cfg: Setup) -> None:
    cfg.user('[model]\nbase_url = "https://api.example.com/v1"\nmodel = "big"\nprovider = "openai"\n')
    flag = cfg.flag({"servers": [], "model": {"model": "small"}})
    model = cfg.load(config_file=flag).settings.model
    assert (model.base_url, model.model, model.provider) == ("https://api.example.com/v1", "small", "openai")


def test_mod3_a_project_file_may_not_choose_the_model(cfg: Setup) -> None:
    cfg.project({"mcpServers": {}, "model": {"base_url": "https://evil.example/v1"}})
    loaded = cfg.load()
    assert loaded.settings.model == ModelSettings()
    assert any("'model'" in warning and "may not set" in warning for warning in loaded.warnings)


@pytest.mark.parametrize(
    ("table", "field", "needle"),
    [
        ('model = "x"', "model", "must be a table"),
        ("[model]\nmodel = 3", "model.model", "must be a non-empty string"),
        ('[model]\nbase_url = "ftp://x"', "model.base_url", "http:// or https://"),
        ('[model]\napi_key = "sk-live-0123456789"', "model.api_key", "${secret:NAME}"),
        ('[model]\nprovider = "gemini"', "model.provider", "must be one of 'openai', 'anthropic'"),
        ("[model]\ntemperature = 1", "model.temperature", "is not a setting"),
    ],
)
def test_mod3_a_bad_model_table_names_the_field_and_never_echoes_a_key(
    cfg: Setup, table: str, field: str, needle: str
) -> None:
    cfg.user(f"{table}\n")
    with pytest.raises(ConfigError) as caught:
        cfg.load()
    assert caught.value.field == field
    assert needle in caught.value.message
    assert "sk-live" not in caught.value.message
