"""What the hosted-API executors (openai_api, anthropic_api) share, checked once for both: each
is registered by entry point, and without its key (and no base_url) it is bad input naming the
key, and `executors` says the key is missing."""

from __future__ import annotations

import pytest

from skillassay.errors import InputError
from skillassay.executors import load_executor_class
from skillassay.executors.anthropic_api import AnthropicExecutor
from skillassay.executors.base import Executor, ExecutorSettings
from skillassay.executors.openai_api import OpenAIExecutor

API_EXECUTORS = [("openai", OpenAIExecutor, "OPENAI_API_KEY", "OPENAI_BASE_URL"),
                 ("anthropic", AnthropicExecutor, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")]


@pytest.mark.parametrize(("name", "cls", "key", "base_url"), API_EXECUTORS, ids=[e[0] for e in API_EXECUTORS])
def test_registered_by_entry_point_and_a_missing_key_is_bad_input(
        monkeypatch: pytest.MonkeyPatch, name: str, cls: type[Executor], key: str, base_url: str) -> None:
    assert load_executor_class(name) is cls
    monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv(base_url, raising=False)
    with pytest.raises(InputError, match=key):
        cls(ExecutorSettings(model="some-model"))
    available, why = cls.availability()
    assert not available and why.startswith(f"{key} not set")
    monkeypatch.setenv(key, "sk-test")
    assert cls.availability() == (True, f"{key} set")
