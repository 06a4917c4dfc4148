"""The judges build their provider clients with the executors' code (executors/openai_api.py,
anthropic_api.py make_client): the same key and base-URL rules, the same refusal (exit 2
naming --judge and the variable) instead of an SDK error in the middle of grading."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_judge import PLAIN, grade_with, make_run

from skillassay.errors import InputError
from skillassay.grade.judge import make_judge
from skillassay.grade.judge_providers import AnthropicJudge, OpenAIJudge
from tests.fake_openai_api import FakeOpenAI, grading_reply


def test_the_openai_judge_reaches_a_local_server_without_a_key(tmp_path: Path, monkeypatch) -> None:
    """As the openai executor does: OPENAI_BASE_URL alone is enough (a llama.cpp server, vLLM)."""
    fake = FakeOpenAI([grading_reply(True)]).start()
    try:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        judge = make_judge("openai", "judge-test")
        assert isinstance(judge, OpenAIJudge)
        grading = grade_with(judge, make_run(tmp_path), tmp_path, [PLAIN])
    finally:
        fake.stop()
    assert grading.expectations[0].passed is True


@pytest.mark.parametrize(("name", "cls", "variable"), [("openai", OpenAIJudge, "OPENAI_API_KEY"),
                                                       ("anthropic", AnthropicJudge, "ANTHROPIC_API_KEY")])
def test_a_judge_without_a_key_is_refused_naming_the_option_and_the_variable(monkeypatch, name, cls, variable) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(InputError) as caught:
        cls()
    problem = caught.value.problems[0]
    assert (problem.file, problem.location) == ("--judge", name) and variable in problem.message
