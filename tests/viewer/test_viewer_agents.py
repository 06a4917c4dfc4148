"""The viewer on a matrix iteration (issue 37): every agent's runs under agents/<name>/ are listed
with their agent, in iteration.json's order, and open like any run; the page offers a filter by
agent only when there are agents; a folder that is not an agent's is never read."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from iteration_factory import write_iteration
from matrix_samples import EVALS, matrix_iteration, write_matrix

from skillassay.viewer.build import benchmark_payload, build_index, index_payload, run_payload
from skillassay.viewer.server import ViewerServer
from skillassay.viewer.static_html import static_html


def test_runs_of_every_agent_are_listed_with_their_agent(tmp_path: Path) -> None:
    it = matrix_iteration(tmp_path)
    index = build_index(it)
    assert index.agents == ["sonnet", "haiku"]  # the config's order, not the alphabet's
    assert [r.agent for r in index.runs] == ["sonnet"] * 4 + ["haiku"] * 4
    first = index.runs[0]
    assert first.run_id == "agents/sonnet/eval-1-e1/with_skill/run-1" and first.eval_name == "e1"
    payload = index_payload(index, {}, "served")
    assert payload["agents"] == ["sonnet", "haiku"] and payload["runs"][0]["agent"] == "sonnet"
    assert payload["skill_name"] == "synthetic" and payload["iteration"] == 1
    detail = run_payload(index, "agents/haiku/eval-2-e2/without_skill/run-1", None, served=True)
    assert detail is not None and detail["prompt"] == "q" and detail["agent"] == "haiku"
    assert detail["grading"]["expectations"][0]["passed"] is False


def test_a_single_agent_iteration_has_no_filter(tmp_path: Path) -> None:
    it = write_iteration(tmp_path / "ws", 1, EVALS)
    index = build_index(it)
    payload = index_payload(index, json.loads((it / "benchmark.json").read_text()), "served")
    assert "agents" not in payload and all("agent" not in r for r in payload["runs"])
    assert payload["runs"][0]["id"] == "eval-1-e1/with_skill/run-1"


def test_only_real_agent_folders_are_read(tmp_path: Path) -> None:
    it = matrix_iteration(tmp_path)
    outside = write_iteration(tmp_path / "elsewhere", 1, EVALS)
    os.symlink(outside, it / "agents" / "linked")  # a symlink out of the iteration
    shutil.copytree(it / "agents" / "haiku", it / "agents" / "Bad Name")  # not an agent name
    index = build_index(it)
    assert index.agents == ["sonnet", "haiku"]
    assert not [r for r in index.runs if "linked" in r.run_id or "Bad" in r.run_id]


def test_the_page_carries_the_agents_and_the_filter(tmp_path: Path) -> None:
    it = matrix_iteration(tmp_path)
    page = static_html(it)
    assert '"agents":["sonnet","haiku"]' in page and "agent-select" in page
    server = ViewerServer(it)
    try:
        body = json.loads(server.index_body())
        assert body["agents"] == ["sonnet", "haiku"] and len(body["runs"]) == 8
    finally:
        server.server_close()


def test_the_benchmark_tab_shows_the_matrix(tmp_path: Path) -> None:
    it = matrix_iteration(tmp_path)
    assert benchmark_payload(it, {})["matrix"] is None  # not summarised yet: nothing to show
    write_matrix(it)
    m = benchmark_payload(it, {})["matrix"]
    assert m["verdict"] == "NOT GATED" and "sonnet" in m["message"]
    assert [a["name"] for a in m["agents"]] == ["sonnet", "haiku"]
    assert m["agents"][0]["effect"] == 0.5 and m["agents"][0]["with_skill"] == 0.5
    assert "agents" in m["heterogeneity"] and m["pooled"]["reason"]
    (it / "matrix.json").write_text('{"agents": "many"}', encoding="utf-8")
    assert "could not be read" in benchmark_payload(it, {})["matrix"]["note"]
