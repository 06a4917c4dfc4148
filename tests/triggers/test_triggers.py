"""Trigger evals (`skillassay triggers`, `optimize-description`): the figures on known counts,
bad input, detection for every executor from what the agent did (the real Claude Code and Codex
CLIs against the loopback fake model API, the embedded model for real, the `command` marker
file with a real subprocess), resume, shadowing, and the optimizer's selection rule on scripted
proposals."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import repo_paths
from agent_cli_support import make_skill, run_scripted
from cli_runner import cli
from fake_model_api import Reply, Stall, ToolCall

from skillassay.executors.agent_loop import ToolBox, skills_loaded, system_prompt
from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.executors.claude_code import ClaudeCodeExecutor
from skillassay.executors.claude_code import skills_loaded as claude_skills_loaded
from skillassay.executors.codex import CodexExecutor
from skillassay.models.triggers import TriggerQuery
from skillassay.spec.skill import Skill, load_skill
from skillassay.triggers import TriggerRequest, figures, measure_triggers
from skillassay.triggers.optimize import (
    OptimizeRequest,
    accepts,
    optimize_description,
    paired_test,
    replace_description,
    stratified_split,
)
from skillassay.triggers.proposer import ScriptedProposer, extract_description, spec_problems

AGENT = repo_paths.TESTS / "trigger_agent.py"
FAKE_ANT_KEY = "sk-ant-fake-test-key-0123456789"
FAKE_OAI_KEY = "sk-fake-test-key-0123456789abcdef"


def write_skill(parent: Path, name: str, description: str) -> Path:
    folder = parent / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\nlicense: MIT\n---\n# {name}\nBody.\n",
                                     encoding="utf-8")
    return folder


def command_request(skill_dir: Path, queries: list[dict], tmp_path: Path, **kw) -> TriggerRequest:
    qpath = tmp_path / "trigger_evals.json"
    qpath.write_text(json.dumps(queries), encoding="utf-8")
    return TriggerRequest(skill_dir=skill_dir, queries_path=qpath, executor="command", workspace=tmp_path / "ws",
                          options={"argv": [sys.executable, "-S", str(AGENT), "{prompt}"]}, **kw)


# ------------------------------------------------------------------ figures (pure)

def test_rates_cluster_by_query_and_never_go_narrower_than_wilson():
    counts = [figures.QueryCounts(True, 3, 3)] * 4 + [figures.QueryCounts(False, 3, 0)] * 4
    rec = figures.recall(counts)
    assert rec.value == 1.0 and (rec.numerator, rec.denominator) == (12, 12)
    # clustered SE is 0 here; Wilson over 12 runs still gives [0.7575, 1]
    assert rec.interval is not None and rec.interval[0] == pytest.approx(0.7575, abs=1e-4) and rec.interval[1] == 1.0
    ftr = figures.false_trigger_rate(counts)
    assert ftr.value == 0.0 and ftr.interval is not None and ftr.interval[0] == 0.0
    acc = figures.accuracy(counts)
    assert acc.value == 1.0 and acc.denominator == 24


def test_precision_is_a_ratio_over_runs_that_fired():
    counts = [figures.QueryCounts(True, 3, 2), figures.QueryCounts(True, 3, 1),
              figures.QueryCounts(False, 3, 1), figures.QueryCounts(False, 3, 0)]
    p = figures.precision(counts)
    assert (p.numerator, p.denominator) == (3, 4) and p.value == 0.75
    # clustered: one query of three that fired is a false trigger, so the interval is wide
    assert p.interval is not None and p.interval[0] < 0.3 and p.interval[1] == 1.0
    assert figures.precision([figures.QueryCounts(True, 3, 0)]).value is None


def test_optimizer_rule_needs_a_positive_difference_beyond_noise():
    inc = {i: 0.0 for i in range(6)}
    better = {i: 1.0 for i in range(6)}
    mean, p, nz = paired_test(inc, better)
    assert mean == 1.0 and p == pytest.approx(1 / 64) and nz == 6
    assert accepts(mean, p, 0.05) and not accepts(mean, p, 0.01)
    five = {i: (1.0 if i < 5 else 0.0) for i in range(6)}
    mean, p, _ = paired_test(inc, five)
    assert p == pytest.approx(1 / 32) and not accepts(mean, p, 0.025)
    mixed = {i: (1.0 if i < 3 else -1.0) + 0.0 for i in range(6)}
    assert not accepts(*paired_test(inc, {i: max(0.0, v) for i, v in mixed.items()})[:2], 0.05)


def test_split_is_seeded_and_stratified():
    qs = [TriggerQuery(query=f"q{i}", should_trigger=i % 2 == 0) for i in range(12)]
    a, b = stratified_split(qs, 7, 0.4), stratified_split(qs, 7, 0.4)
    assert a == b and set(a[0]) | set(a[1]) == set(range(12)) and not set(a[0]) & set(a[1])
    test = a[1]
    assert sum(qs[i].should_trigger for i in test) == 2 and sum(not qs[i].should_trigger for i in test) == 2
    assert stratified_split(qs, 8, 0.4) != a


def test_proposals_are_checked_against_the_spec():
    assert extract_description("blah <new_description> Use for X. </new_description>") == "Use for X."
    assert spec_problems("a" * 1025) == ["1025 characters, over the 1024 limit"]
    assert spec_problems("use <b>") == ["contains < or >"]
    assert spec_problems("  ") == ["empty"]


def test_replace_description_changes_only_that_key(tmp_path):
    md = tmp_path / "SKILL.md"
    text = "---\nname: x\ndescription: >\n  old folded\n  text\nlicense: MIT\n---\nBody: keep\n"
    out = replace_description(text, "New: one 'quoted' line", md)
    assert "license: MIT\n" in out and out.endswith("---\nBody: keep\n") and "old folded" not in out
    from skillassay.spec.skill import split_frontmatter
    assert split_frontmatter(out, md)[0]["description"] == "New: one 'quoted' line"


# ------------------------------------------------------------------ bad input: exit 2, file and field

@pytest.mark.parametrize("content, where", [
    ('[{"query": "a", "should_trigger": "yes"}]', "[0].should_trigger"),
    ('[{"query": "a"}]', "[0].should_trigger"),
    ('{"query": "a", "should_trigger": true}', "expected a JSON list"),
    ('[{"query": "a", "should_trigger": true}, {"query": "a", "should_trigger": false}]', "[1].query"),
    ('[{"query": "a", "should_trigger": true, "shoud": 1}]', "shoud"),
    ("[]", "at least one query"),
])
def test_bad_query_file_is_exit_2_naming_file_and_field(tmp_path, content, where):
    skill = write_skill(tmp_path, "zeta", "Zeta things.")
    (skill / "evals").mkdir()
    (skill / "evals" / "trigger_evals.json").write_text(content, encoding="utf-8")
    res = cli(["triggers", str(skill), "--executor", "echo"])
    assert res.exit_code == 2, res.output
    assert "trigger_evals.json" in res.output and where in res.output and "Traceback" not in res.output


def test_an_executor_that_cannot_detect_loading_is_refused(tmp_path):
    skill = write_skill(tmp_path, "zeta", "Zeta things.")
    q = tmp_path / "q.json"
    q.write_text('[{"query": "a", "should_trigger": true}]')
    res = cli(["triggers", str(skill), "--queries", str(q), "--executor", "echo"])
    assert res.exit_code == 2 and "cannot report which skill a run loaded" in res.output


# ------------------------------------------------------------------ command executor (marker file), resume, shadowing

def test_command_marker_file_resume_shadowing_and_gate(tmp_path):
    skill = write_skill(tmp_path / "skills", "zebra-facts", "Knows zebra lore.")
    other = write_skill(tmp_path / "skills", "stripe-facts", "Knows stripe lore.")
    queries = [{"query": "tell me zebra fact", "should_trigger": True},
               {"query": "which stripe pattern do zebras have", "should_trigger": True},
               {"query": "tell me mango fact", "should_trigger": False},
               {"query": "zebra crossing rules", "should_trigger": False}]
    req = command_request(skill, queries, tmp_path, runs=2, with_skills=[other], min_recall=0.9, concurrency=2)
    report, folder, gate = measure_triggers(req)
    rates = [(q.trigger_rate.numerator, q.trigger_rate.denominator) for q in report.queries]
    assert rates == [(2, 2), (0, 2), (0, 2), (2, 2)]
    assert report.misses == [1] and report.false_triggers == [3]
    assert report.queries[1].other_skills_fired == {"stripe-facts": 2} and report.shadowed_by == {"stripe-facts": 2}
    assert report.recall.value == 0.5 and report.false_trigger_rate.value == 0.5
    assert gate.status == "FAIL" or gate.status == "INCONCLUSIVE"
    assert gate.exit_code in (1, 3)
    # the figures agree with the records' transcripts (the marker file's content)
    for q in report.queries:
        for run in q.runs:
            record = json.loads((folder / run.record).read_text())
            marker = next(e for e in record["transcript"] if e["type"] == "skills_loaded")
            assert run.triggered == ("zebra-facts" in marker["names"])
    md = (folder / "triggers.md").read_text()
    assert "## Shadowing" in md and "stripe-facts: 2 run(s)" in md
    # resumed: nothing runs again
    seen: list[bool] = []
    again, _, _ = measure_triggers(req, on_done=lambda spec, rec, reused: seen.append(reused))
    assert seen == [True] * 8 and again.recall == report.recall


def test_cli_triggers_exit_code_and_files(tmp_path):
    skill = write_skill(tmp_path / "skills", "zebra-facts", "Knows zebra lore.")
    (skill / "evals").mkdir()
    (skill / "evals" / "trigger_evals.json").write_text(json.dumps(
        [{"query": f"zebra fact {i}", "should_trigger": True} for i in range(4)]
        + [{"query": f"mango fact {i}", "should_trigger": False} for i in range(4)]))
    args = ["triggers", str(skill), "--executor", "command", "--runs", "1", "--workspace", str(tmp_path / "ws"),
            "-o", "argv=" + json.dumps([sys.executable, "-S", str(AGENT), "{prompt}"]),
            "--min-trigger-recall", "0.5", "--max-false-trigger-rate", "0.6"]
    res = cli(args)
    assert res.exit_code == 0, res.output
    assert "PASS: min_trigger_recall" in res.output and "gate: PASS" in res.output
    data = json.loads((tmp_path / "ws" / "triggers" / "triggers.json").read_text())
    assert data["schema_version"] == 1 and data["recall"]["value"] == 1.0 and data["gate"]["status"] == "PASS"


# ------------------------------------------------------------------ the optimizer's selection rule, scripted proposals

def test_optimizer_adopts_only_a_description_that_wins_on_test_beyond_noise(tmp_path):
    skill = write_skill(tmp_path / "skills", "zebra-facts", "Knows nothing useful.")
    queries = ([{"query": f"tell zebra fact {i}", "should_trigger": True} for i in range(12)]
               + [{"query": f"tell mango fact {i}", "should_trigger": False} for i in range(12)])
    req = command_request(skill, queries, tmp_path, runs=1, concurrency=4)
    proposer = ScriptedProposer(["Knows <zebra> lore.",  # refused unmeasured: breaks the spec
                                 "Knows zebra and mango lore.",  # +6 and -6 on test: mean 0
                                 "Knows zebra lore."])  # +6 on test: p = 1/64 <= 0.05/3
    history, out = optimize_description(OptimizeRequest(req, rounds=3, test_fraction=0.5, apply=True), proposer)
    statuses = [r.status for r in history.rounds]
    assert statuses == ["current", "invalid", "rejected", "accepted"]
    assert history.rounds[2].test_difference == 0.0
    assert history.rounds[3].p_value == pytest.approx(1 / 64)
    assert history.best_description == "Knows zebra lore." and history.changed and history.applied
    # the proposer saw only train queries
    seen = {q.query for ctx in proposer.calls for q in ctx.misses}
    test_queries = {queries[i]["query"] for i in history.test}
    assert seen and not seen & test_queries
    reloaded = load_skill(skill)
    assert reloaded.description == "Knows zebra lore." and reloaded.frontmatter["license"] == "MIT"
    assert (out / "description_history.json").is_file() and "accepted" in (out / "description_report.md").read_text()


def test_optimizer_keeps_the_description_when_the_test_split_cannot_tell(tmp_path):
    skill = write_skill(tmp_path / "skills", "zebra-facts", "Knows nothing useful.")
    queries = ([{"query": f"tell zebra fact {i}", "should_trigger": True} for i in range(4)]
               + [{"query": f"tell mango fact {i}", "should_trigger": False} for i in range(4)])
    req = command_request(skill, queries, tmp_path, runs=1)
    before = (skill / "SKILL.md").read_text()
    history, out = optimize_description(OptimizeRequest(req, rounds=1, test_fraction=0.5, apply=True),
                                        ScriptedProposer(["Knows zebra lore."]))
    assert "no candidate can be adopted, whatever it scores" in (out / "description_report.md").read_text()
    # 2 test positives go 0 -> 1: p = 1/4, which cannot pass; the original stays
    assert history.rounds[1].status == "rejected" and "cannot go below" in history.rounds[1].reason
    assert not history.changed and not history.applied and (skill / "SKILL.md").read_text() == before


# ------------------------------------------------------------------ claude-code: a Read of SKILL.md counts, at any point

def test_claude_detection_reads_every_tool_call_not_only_the_first():
    def use(i: int, name: str, inp: dict) -> dict:
        return {"type": "assistant", "message": {"id": f"m{i}", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": name, "input": inp}]}}
    events = [use(1, "Glob", {"pattern": "*"}),
              use(2, "Read", {"file_path": "/tmp/x/work/.claude/skills/other-skill/SKILL.md"}),
              {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t2", "is_error": True}]}},
              use(3, "Read", {"file_path": "/tmp/x/work/.claude/skills/demo-skill/SKILL.md"})]
    assert claude_skills_loaded(events, ["demo-skill", "other-skill"]) == ["demo-skill"]  # the failed read loaded nothing
    assert claude_skills_loaded(events[:1], ["demo-skill"]) == []


# ------------------------------------------------------------------ API executors: load_skill by name

def test_agent_loop_lists_every_skill_and_detects_which_was_loaded(tmp_path):
    a = load_skill(write_skill(tmp_path, "alpha-one", "Alpha things."))
    b = load_skill(write_skill(tmp_path, "beta-two", "Beta things."))
    prompt = system_prompt(a, (b,))
    assert "name: alpha-one" in prompt and "name: beta-two" in prompt
    box = ToolBox(tmp_path, a, {}, (b,))
    from skillassay.executors.agent_loop import ToolCall as LoopCall
    assert box.call(LoopCall("1", "load_skill", {"name": "beta-two"}))[0].startswith("# Skill: beta-two")
    assert box.call(LoopCall("2", "load_skill", {"name": "gamma"}))[1] is True
    assert box.call(LoopCall("4", "load_skill", {"name": "Beta-Two"}))[0].startswith("# Skill: beta-two")
    single = ToolBox(tmp_path, a, {})  # one skill: whatever name a small model writes, it means that one
    assert single.call(LoopCall("5", "load_skill", {"name": "Alpha One"}))[0].startswith("# Skill: alpha-one")
    transcript = [{"type": "assistant", "tool_calls": [{"id": "1", "name": "load_skill", "arguments": {"name": "beta-two"}},
                                                        {"id": "2", "name": "load_skill", "arguments": {"name": "gamma"}}]},
                  {"type": "tool_result", "id": "1", "is_error": False}, {"type": "tool_result", "id": "2", "is_error": True}]
    assert skills_loaded(transcript, ["alpha-one", "beta-two"]) == ["beta-two"]
    no_name = [{"type": "assistant", "tool_calls": [{"id": "3", "name": "load_skill", "arguments": {}}]}]
    assert skills_loaded(no_name, ["alpha-one", "beta-two"]) == ["alpha-one"]


# ------------------------------------------------------------------ the real CLIs against the loopback fake model API

needs_claude = pytest.mark.skipif(shutil.which("claude") is None, reason="claude CLI not on PATH")
needs_codex = pytest.mark.skipif(shutil.which("codex") is None, reason="codex CLI not on PATH")


def _two_skills(tmp_path: Path) -> tuple[Skill, Skill]:
    skill = make_skill(tmp_path / "skills")
    other = load_skill(write_skill(tmp_path / "skills", "other-skill", "Writes farewell files."))
    return skill, other


def _trigger(executor, api_url_options: dict, work: Path, skill: Skill, other: Skill, query: str = "Greet me in a file."):
    ex = executor(ExecutorSettings(model="m", timeout_seconds=60, options=api_url_options))

    def run(api, work_dir, sk):
        ex.settings.options["base_url"] = api_url_options["prefix"](api)
        req = TrialRequest(prompt=query, workdir=work_dir, skill=sk, seed=1, settings=ex.settings, extra_skills=(other,))
        return ex.run_trigger(req)
    return ex, run


@pytest.fixture
def cli_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANT_KEY)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OAI_KEY)
    monkeypatch.delenv("CODEX_API_KEY", raising=False)


CLAUDE_CASES = [
    ([Reply(tool_calls=[ToolCall("Skill", {"skill": "demo-skill"})]), Reply(text="done")], ["demo-skill"]),
    ([Reply(tool_calls=[ToolCall("Skill", {"skill": "other-skill"})]), Reply(text="done")], ["other-skill"]),
    ([Reply(text="Hello!")], []),
]


@pytest.mark.agent_cli
@needs_claude
@pytest.mark.parametrize("script, expected", CLAUDE_CASES, ids=["this-skill", "other-skill", "none"])
def test_real_claude_cli_trigger_detection(tmp_path, work, cli_env, script, expected):
    skill, other = _two_skills(tmp_path)
    ex, run = _trigger(ClaudeCodeExecutor, {"prefix": lambda api: api.base_url}, work, skill, other)
    result, api = run_scripted(script, run, work, skill, hangup_ok=True)
    assert result.status == "ok", result.error
    assert ex.skills_loaded(result, ["demo-skill", "other-skill"]) == expected
    listed = json.dumps(api.model_requests()[0]["body"])
    assert "demo-skill" in listed and "other-skill" in listed  # both installed where Claude Code finds skills


@pytest.mark.agent_cli
@needs_claude
def test_real_claude_cli_trigger_run_stops_once_the_skill_is_loaded(tmp_path, work, cli_env):
    """The rest of the task decides nothing: the run ends at the Skill call; loading another
    skill first does not stop it. The model's next turn never answers (Stall): a run that did
    not stop would hang until its 60 s timeout and fail. (Claude Code may already have sent
    that next request when it is stopped, so the count is at most 2, not exactly 1.)"""
    skill, other = _two_skills(tmp_path)
    ex, run = _trigger(ClaudeCodeExecutor, {"prefix": lambda api: api.base_url}, work, skill, other)
    script = [Reply(tool_calls=[ToolCall("Skill", {"skill": "demo-skill"})]), Stall()]
    result, api = run_scripted(script, run, work, skill, hangup_ok=True)
    assert result.status == "ok", result.error
    assert ex.skills_loaded(result, ["demo-skill"]) == ["demo-skill"]
    assert len(api.model_requests()) <= 2
    assert result.transcript[-1]["type"] == "_skillassay"
    script = [Reply(tool_calls=[ToolCall("Skill", {"skill": "other-skill"})]), Reply(text="done")]
    result, api = run_scripted(script, run, work, skill, hangup_ok=True)
    assert result.status == "ok" and len(api.model_requests()) == 2


CODEX_CASES = [
    ([Reply(tool_calls=[ToolCall("exec_command", {"cmd": "cat .agents/skills/demo-skill/SKILL.md"})]), Reply(text="done")],
     ["demo-skill"]),
    ([Reply(tool_calls=[ToolCall("exec_command", {"cmd": "cat .agents/skills/other-skill/SKILL.md"})]), Reply(text="done")],
     ["other-skill"]),
    ([Reply(text="Hello!")], []),
]


@pytest.mark.agent_cli
@needs_codex
@pytest.mark.parametrize("script, expected", CODEX_CASES, ids=["this-skill", "other-skill", "none"])
def test_real_codex_cli_trigger_detection(tmp_path, work, cli_env, script, expected):
    skill, other = _two_skills(tmp_path)
    ex, run = _trigger(CodexExecutor, {"prefix": lambda api: api.base_url + "/v1", "max_retries": 0}, work, skill, other)
    result, api = run_scripted(script, run, work, skill, hangup_ok=True)
    assert result.status == "ok", result.error
    assert ex.skills_loaded(result, ["demo-skill", "other-skill"]) == expected
    listed = json.dumps(api.model_requests()[0]["body"])
    assert "demo-skill" in listed and "other-skill" in listed


# ------------------------------------------------------------------ the embedded model, for real

@pytest.mark.model
def test_embedded_model_trigger_run_agrees_with_its_transcript(tmp_path, example_skill):
    other = write_skill(tmp_path / "skills", "bread-baking", "Recipes and baking times for bread.")
    q = tmp_path / "q.json"
    q.write_text(json.dumps([{"query": "What port does the Acme VPN server use?", "should_trigger": True},
                             {"query": "How long do I bake sourdough bread?", "should_trigger": False}]))
    report, folder, _ = measure_triggers(TriggerRequest(skill_dir=example_skill, queries_path=q, runs=1,
                                                        with_skills=[other], workspace=tmp_path / "ws"))
    assert report.runs_completed == 2 and report.other_skills == ["bread-baking"]
    for qr in report.queries:
        record = json.loads((folder / qr.runs[0].record).read_text())
        request = record["transcript"][0]
        listing = request["messages"][0]["content"]
        assert "name: acme-vpn" in listing and "name: bread-baking" in listing and "4433" not in listing
        assert request["response_format"]["schema"]["properties"]["skill"]["enum"] == ["acme-vpn", "bread-baking", None]
        answer = json.loads(record["transcript"][1]["response"]["choices"][0]["message"]["content"])
        assert qr.runs[0].loaded == ([answer["skill"]] if answer["skill"] else [])
        assert qr.runs[0].triggered == (answer["skill"] == "acme-vpn")


def test_a_query_whose_runs_all_failed_keeps_its_threshold_from_passing(tmp_path):
    """Failed runs are left out of the rates; a query with none completed is missing from them,
    and a run that loads the skill and then stalls is the likeliest to time out, so a PASS (or
    FAIL) on the rest would be a call on a biased sample."""
    skill = write_skill(tmp_path / "skills", "zebra-facts", "Knows zebra lore.")
    queries = [{"query": f"tell me zebra fact {i}", "should_trigger": True} for i in range(12)]
    queries.append({"query": "zebra fact, but FAIL this run", "should_trigger": True})
    req = command_request(skill, queries, tmp_path, runs=2, min_recall=0.5, concurrency=2)
    report, _, gate = measure_triggers(req)
    assert report.queries[-1].outcome == "unmeasured" and report.runs_failed == 2
    assert report.recall.value == 1.0 and report.recall.interval[0] > 0.5  # the rest alone would PASS
    assert gate.status == "INCONCLUSIVE", gate.headline()
    (t,) = gate.thresholds
    assert t.status == "INCONCLUSIVE" and t.evals == ["[12] zebra fact, but FAIL this run"]
    assert "no completed run" in t.advice
