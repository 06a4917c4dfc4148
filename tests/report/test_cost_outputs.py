"""Every output shows what the trials cost (issue 36): the console summary, benchmark.md,
report.md, the viewer, JUnit properties and the GitHub job summary, from one real run of the
`openai` executor and SDK against the loopback stand-in for the hosted API, priced by the
config's price table (50 + 20 tokens a reply at $1000 per million: $0.07 a trial)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_runner import invoke
from fake_openai_api import FakeOpenAI

from skillassay.viewer.build import benchmark_payload


@pytest.fixture
def ran(example_skill: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, Path, Path]:
    config_path = example_skill / "evals" / "benchmark_config.json"
    config = json.loads(config_path.read_text())
    config.update({"executor": "openai", "model": "fake-model", "max_tokens": None, "temperature": None,
                   "prices": {"fake-model": {"input": 1000.0, "output": 1000.0}},
                   "thresholds": {"max_avg_cost_usd": 0.1}})
    config_path.write_text(json.dumps(config))
    summary, junit = tmp_path / "summary.md", tmp_path / "junit.xml"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    fake = FakeOpenAI(["The Acme VPN server listens on port 4433."] * 40).start()
    try:
        got = invoke("run", str(example_skill), "--workspace", str(tmp_path / "ws"), "--trials", "1",
                     "-o", f"base_url={fake.base_url}", "--junit", str(junit))
    finally:
        fake.stop()
    assert got.exit_code == 0, got.output  # max_avg_cost_usd: $0.07 every trial, well under $0.10
    return tmp_path / "ws" / "iteration-1", got.flat, summary, junit


def test_each_output_shows_the_cost(ran: tuple[Path, str, Path, Path]) -> None:
    it, console, summary, junit = ran
    assert "cost: with skill $0.56 total, $0.07 per trial" in console
    assert "PASS: max_avg_cost_usd" in console
    bench = json.loads((it / "benchmark.json").read_text())
    assert bench["cost"]["configurations"]["with_skill"]["total_usd"] == pytest.approx(8 * 0.07)
    md = (it / "benchmark.md").read_text()
    assert "## Cost (USD)" in md and "| Total | $0.56 | $0.56 |" in md
    report = (it / "report.md").read_text()
    assert "### Cost (USD)" in report and "| Avg cost | $0.07" in report
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).iter("property")}
    assert float(props["cost.with_skill.total_usd"]) == pytest.approx(0.56)
    assert "per task" in props["cost.skill_effect"]
    assert "**Cost**: with skill $0.56 total" in summary.read_text()
    payload = benchmark_payload(it, bench)
    rows = {r["label"]: r for r in payload["summary"]}
    assert rows["total cost (USD)"]["skill"]["value"] == pytest.approx(0.56)
    assert rows["cost per trial (USD)"]["kind"] == "cost_mean"
    assert any(h["label"] == "the skill's cost" for h in payload["headline"])
