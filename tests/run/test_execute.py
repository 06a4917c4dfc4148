"""What happens while trials run: retries keep the failed attempts' transcripts, wait for the
provider's Retry-After and stay inside the trial's deadline; a dead provider stops the run
early; errored and timed-out trials are run again by the next `run`, their earlier attempt kept."""

from __future__ import annotations

import json
import shutil
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest
from cli_runner import invoke as _cli

from skillassay.executors import Executor, ExecutorSettings, TransientError, TrialRequest, TrialResult
from skillassay.executors.retry import parse_retry_after, retry_after_seconds
from skillassay.run.execute import RetryPolicy, call_with_retries


class Scripted(Executor):
    """Each call pops the next step: an exception to raise or a result to return."""

    name = "scripted"
    handles_timeout = True

    def __init__(self, steps: list[TrialResult | BaseException], pause: float = 0.0,
                 timeout: float = 300.0) -> None:
        super().__init__(ExecutorSettings(timeout_seconds=timeout))
        self.steps, self.pause = list(steps), pause
        self.calls: list[tuple[float, float]] = []  # (monotonic time, timeout given)

    def run(self, request: TrialRequest) -> TrialResult:
        self.calls.append((time.monotonic(), request.settings.timeout_seconds))
        time.sleep(self.pause)
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        if isinstance(step, BaseException):
            raise step
        return step


def _request(tmp_path: Path, ex: Executor) -> TrialRequest:
    return TrialRequest(prompt="p", workdir=tmp_path, skill=None, seed=1, settings=ex.settings)


def _overloaded(n: int) -> TransientError:
    partial = TrialResult(status="error", error="API status 529",
                          transcript=[{"type": "system", "subtype": "init", "attempt": n},
                                      {"type": "result", "is_error": True, "api_error_status": 529}])
    return TransientError("API status 529: Overloaded", result=partial)


def test_failed_trial_keeps_every_attempts_transcript(tmp_path: Path) -> None:
    ex = Scripted([_overloaded(1), _overloaded(2)])
    result, attempts = call_with_retries(ex, _request(tmp_path, ex), RetryPolicy(attempts=2, wait_initial=0, wait_max=0))
    assert result.status == "error" and attempts == 2
    assert "after 2 attempts" in (result.error or "") and "529" in (result.error or "")
    inits = [e["attempt"] for e in result.transcript if e.get("subtype") == "init"]
    assert inits == [1, 2], result.transcript
    assert [e["attempt"] for e in result.transcript if e["type"] == "retry"] == [1, 2]


def test_recovered_trial_shows_the_retry(tmp_path: Path) -> None:
    ok = TrialResult(final_text="fine", transcript=[{"type": "answer"}])
    ex = Scripted([_overloaded(1), ok])
    result, attempts = call_with_retries(ex, _request(tmp_path, ex), RetryPolicy(attempts=3, wait_initial=0, wait_max=0))
    assert result.status == "ok" and attempts == 2 and result.final_text == "fine"
    assert [e["type"] for e in result.transcript] == ["retry", "answer"]


def test_retry_after_is_honoured(tmp_path: Path) -> None:
    ok = TrialResult(final_text="fine")
    ex = Scripted([TransientError("429 rate limited", retry_after=0.6), ok])
    result, attempts = call_with_retries(ex, _request(tmp_path, ex), RetryPolicy(attempts=3, wait_initial=0, wait_max=0))
    assert result.status == "ok" and attempts == 2
    waited = ex.calls[1][0] - ex.calls[0][0]
    assert waited >= 0.6, f"retried after {waited:.3f}s although the provider asked for 0.6s"


def test_retry_after_header_of_an_sdk_error_and_http_dates() -> None:
    class Response:
        headers = {"retry-after": "2"}

    class SdkError(Exception):
        response = Response()

    assert retry_after_seconds(SdkError()) == 2.0
    assert retry_after_seconds(ValueError()) is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= (parse_retry_after(later) or 0) <= 31
    assert parse_retry_after("soon") is None and parse_retry_after("-3") == 0.0


def test_backoff_never_runs_past_the_trials_deadline(tmp_path: Path) -> None:
    """Attempts of 0.3 s and backoff of 0.8 s, then 1.6 s, under a 1.5 s timeout: without the
    deadline the trial took 0.3 + 0.8 + 0.3 + 1.6 + 0.3 = 3.3 s."""
    ex = Scripted([TransientError("503")], pause=0.3, timeout=1.5)
    t0 = time.monotonic()
    result, attempts = call_with_retries(ex, _request(tmp_path, ex), RetryPolicy(attempts=3, wait_initial=0.8, wait_max=30))
    took = time.monotonic() - t0
    assert result.status == "error" and took <= 1.5, f"a 1.5 s trial took {took:.2f}s"
    assert attempts == 2 and "deadline" in (result.error or "")
    # the retry was given only what was left of the 1.5 s
    assert ex.calls[0][1] == 1.5 and ex.calls[1][1] < 0.5


def test_slow_attempt_gets_only_the_time_left(tmp_path: Path) -> None:
    """An executor that cannot stop itself is abandoned at what is left of the deadline."""
    class Slow(Scripted):
        handles_timeout = False

    ex = Slow([TransientError("502"), TrialResult(final_text="late")], pause=0.4, timeout=1.0)
    t0 = time.monotonic()
    result, _ = call_with_retries(ex, _request(tmp_path, ex), RetryPolicy(attempts=3, wait_initial=0.3, wait_max=30))
    took = time.monotonic() - t0
    assert took < 1.2, f"a 1 s trial took {took:.2f}s"
    assert result.status == "timeout" and ex.calls[1][1] < 0.4


# ---------------------------------------------------------------- the run as a whole (CLI)



def _provider(flag: Path, fail_when: str = "true") -> str:
    """A real subprocess agent whose provider is down (529) until `flag` exists; `fail_when`
    (a shell test) narrows which trials fail."""
    script = (f'if [ -f "{flag}" ] || ! {fail_when}; then echo "The VPN port is 51820."; '
              'else echo "API Error: 529 Overloaded (request req_011CUx9Fh2Kq8PzE3n4)" >&2; exit 1; fi')
    return "argv=" + json.dumps(["sh", "-c", script, "agent", "{skill_dir}"])


def _graded(ws: Path) -> list[Path]:
    return sorted(ws.glob("iteration-1/*/*/run-*/grading.json"))


def test_dead_provider_stops_the_run_and_the_next_run_resumes_the_failed_trials(example_skill: Path, tmp_path: Path) -> None:
    ws, flag = tmp_path / "ws", tmp_path / "provider-is-back"  # a host file: unconfined, so it is seen
    code, out = _cli("run", str(example_skill), "--executor", "command", "-o", _provider(flag),
                     "--trials", "2", "--workspace", str(ws), "--sandbox", "none")
    assert code == 2, out
    assert "run stopped" in out and "529 Overloaded" in out and "run the same command again" in out
    assert len(_graded(ws)) == 5, "only the first 5 of 32 trials may be spent"
    assert "Traceback" not in out

    flag.touch()  # the provider is back
    code, out = _cli("run", str(example_skill), "--executor", "command", "-o", _provider(flag),
                     "--trials", "2", "--workspace", str(ws), "--sandbox", "none")
    assert code != 2, out
    assert "0 trials already graded, 32 to run" in out and "5 trials that errored or timed out before run again" in out
    assert len(_graded(ws)) == 32
    runs = [g.parent for g in _graded(ws)]
    statuses = {json.loads((r / "outputs" / "metrics.json").read_text())["status"] for r in runs}
    assert statuses == {"ok"}
    kept = sorted(ws.glob("iteration-1/*/*/run-*/attempts/1/metrics.json"))
    assert len(kept) == 5
    first = json.loads(kept[0].read_text())
    assert first["status"] == "error" and "529 Overloaded" in first["error"]
    assert (kept[0].parent / "transcript.jsonl").read_text().strip()
    bench = json.loads((ws / "iteration-1" / "benchmark.json").read_text())
    assert [e["with_skill"]["trials_completed"] for e in bench["per_eval"]] == [2] * 8

    code, out = _cli("run", str(example_skill), "--executor", "command", "-o", _provider(flag),
                     "--trials", "2", "--workspace", str(ws), "--sandbox", "none")
    assert "32 trials already graded, 0 to run" in out, out


def test_failures_after_a_success_are_measurements_not_a_dead_provider(example_skill: Path, tmp_path: Path) -> None:
    """The baseline arm (no skill folder) fails every time, the skill arm works: all trials run."""
    ws = tmp_path / "ws"
    code, out = _cli("run", str(example_skill), "--executor", "command",
                     "-o", _provider(tmp_path / "never", fail_when='[ -z "$1" ]'),
                     "--trials", "1", "--workspace", str(ws))
    assert "run stopped" not in out, out
    assert len(_graded(ws)) == 16


@pytest.mark.agent_cli
@pytest.mark.skipif(shutil.which("claude") is None, reason="claude CLI not on PATH")
@pytest.mark.slow
def test_overloaded_api_stops_the_run_after_5_trials_and_retries_only_the_first(example_skill: Path, tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The real Claude Code CLI against an API answering 529 to everything. The first trial
    is retried (3 attempts); until a trial succeeds the next ones get one attempt each, and
    the fifth failure stops the run: 3 + 4 requests, not the 48 of 16 trials x 3 attempts."""
    from fake_model_api import FakeModelAPI, HttpError

    from skillassay.errors import InputError
    from skillassay.run.engine import RunRequest, run_benchmark

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-test-key-0123456789")
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    ws = tmp_path / "ws"
    with FakeModelAPI([HttpError(529, "overloaded_error", "Overloaded")] * 60) as api:
        req = RunRequest(skill_dir=example_skill, executor="claude-code", workspace=ws, trials=1,
                         model="claude-sonnet-4-5", timeout_seconds=60,
                         executor_options={"base_url": api.base_url},
                         retry=RetryPolicy(attempts=3, wait_initial=0.1, wait_max=0.2))
        with pytest.raises(InputError) as caught:
            run_benchmark(req)
    message = str(caught.value)
    assert "run stopped" in message and "529" in message, message
    assert len(api.model_requests()) == 3 + 4
    graded = _graded(ws)
    assert len(graded) == 5
    metrics = [json.loads((g.parent / "outputs" / "metrics.json").read_text()) for g in graded]
    assert sorted(m["attempts"] for m in metrics) == [1, 1, 1, 1, 3]
    # the failed trials' transcripts are kept: the CLI's own events, then the retry markers
    transcript = [json.loads(line) for line in (graded[0].parent / "transcript.jsonl").read_text().splitlines()]
    assert any(e.get("type") == "result" and e.get("api_error_status") == 529 for e in transcript)


def test_dead_provider_stops_a_concurrent_run_too(example_skill: Path, tmp_path: Path) -> None:
    """Trials already running when the fifth failure lands finish; none is started after it."""
    ws = tmp_path / "ws"
    code, out = _cli("run", str(example_skill), "--executor", "command", "-o", _provider(tmp_path / "never"),
                     "--trials", "3", "--concurrency", "3", "--workspace", str(ws))
    assert code == 2 and "run stopped" in out, out
    assert 5 <= len(_graded(ws)) <= 7, "at most the 2 trials running beside the fifth may finish"


def test_same_error_streak_ignores_ids_and_numbers_but_not_the_reason() -> None:
    from skillassay.run.stop import SameErrorStreak
    from skillassay.store.records import TrialRecord

    def failed(error: str, status: str = "error") -> TrialRecord:
        return TrialRecord(eval_id=1, eval_name="e", configuration="with_skill", run_number=1, status=status,
                           passed=None, error=error)

    streak = SameErrorStreak(3)
    assert not streak.add(failed("529 Overloaded (request req_011CUx9Fh2Kq8PzE3n4) after 4.2s"))
    assert not streak.add(failed("529 Overloaded (request req_011CUy7Zz1Lm2QaB9k0) after 9.9s"))
    assert not streak.add(failed("401 invalid x-api-key"))  # another reason: counting starts over
    assert streak.count == 1 and streak.unproven
    assert not streak.add(failed("401 invalid x-api-key"))
    assert streak.add(failed("401 invalid x-api-key")) and streak.tripped
    assert streak.error == "401 invalid x-api-key"

    proven = SameErrorStreak(2)
    proven.add(TrialRecord(eval_id=1, eval_name="e", configuration="with_skill", run_number=1, status="ok", passed=True))
    assert not any(proven.add(failed("timed out after 5s", "timeout")) for _ in range(5))
    assert not proven.unproven


def test_api_executors_backoff_never_runs_past_the_trials_deadline() -> None:
    """agent_loop's per-request retries: calls failing after 0.3 s with a 0.8 s first backoff
    under a 1 s deadline used to sleep past it (0.3 + 0.8 + 0.3 = 1.4 s)."""
    from skillassay.executors.agent_loop import call_with_retries as call_api

    class Overloaded(Exception):
        pass

    def request(remaining: float) -> str:
        time.sleep(0.3)
        raise Overloaded(f"529 with {remaining:.2f}s left")

    transcript: list[dict] = []
    t0 = time.monotonic()
    with pytest.raises(Overloaded):
        call_api(request, lambda exc: isinstance(exc, Overloaded), {"retry_initial_wait": 0.8}, transcript, timeout=1.0)
    took = time.monotonic() - t0
    assert took <= 1.0, f"a 1 s trial spent {took:.2f}s in retries"
