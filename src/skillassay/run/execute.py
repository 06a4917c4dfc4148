"""Executing one trial: a fresh work dir with the eval's input files, the executor (retried
with backoff on transient errors only), then the spec's run files written from its result.
A trial that still fails is recorded as failed (status error/timeout), never dropped."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from skillassay.executors import Executor, TransientError, TrialRequest, TrialResult, Usage
from skillassay.executors.give_up import GiveUp
from skillassay.executors.pricing import trial_cost
from skillassay.executors.process_group import stop_requested
from skillassay.grade.turns import TURNS_FILE
from skillassay.models import Metrics, Timing
from skillassay.run.execute_turns import (
    check_turns,
    redact_turns,
    tag_transcript,
    timing_turns,
    turn_figures,
    turns_file_text,
    turns_markdown,
)
from skillassay.run.plan import Trial
from skillassay.spec.skill import Skill
from skillassay.store.bounded import capped
from skillassay.store.jsonio import json_entry, now_iso
from skillassay.store.layout import ANSWER_FILE, remove_tree
from skillassay.store.writebehind import DIRECT, FileEntry, FileSink

if TYPE_CHECKING:
    from tenacity import RetryCallState


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3
    wait_initial: float = 1.0
    wait_max: float = 30.0
    give_up: GiveUp | None = None  # the stop rule's, while no trial has succeeded (run/stop.py)


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """relative path -> (size, mtime_ns), to find what the agent created or changed."""
    return walk_outputs(root)[0]


def walk_outputs(root: Path) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """(relative path -> (size, mtime_ns), the agent folders at the top that the walk did not
    enter). One scandir walk building relative names as it goes (os.walk plus relpath took 6 s
    on 200,000 files), its entries used as they come (a list of 200,000 of them held tens of
    MB); symlinks are listed, never followed."""
    out: dict[str, tuple[int, int]] = {}
    agent_dirs: list[str] = []
    stack = [(os.fspath(root), "")]
    while stack:
        path, prefix = stack.pop()
        try:
            with os.scandir(path) as it:
                for entry in it:
                    if entry.is_dir():  # as os.walk: a link to a folder is a folder, never entered
                        if entry.is_symlink():
                            continue
                        if entry.name not in AGENT_DIRS:
                            stack.append((entry.path, f"{prefix}{entry.name}/"))
                        elif not prefix:
                            agent_dirs.append(entry.name)
                        continue
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except FileNotFoundError:  # removed since it was listed (a stray child of the agent)
                        continue
                    out[prefix + entry.name] = (st.st_size, st.st_mtime_ns)
        except OSError:  # as os.walk: a folder that cannot be read is passed over
            continue
    return out, agent_dirs


def run_with_deadline(executor: Executor, request: TrialRequest) -> TrialResult:
    """Stop waiting at the per-trial timeout for executors that cannot enforce it themselves.
    The abandoned call keeps running in a daemon thread (in-process code cannot be killed);
    the trial is recorded as timed out (or as stopped, when the run is: it is then not kept)."""
    if executor.handles_timeout:
        return executor.run(request)
    box: dict[str, TrialResult | BaseException] = {}

    def target() -> None:
        try:
            box["result"] = executor.run(request)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, daemon=True, name="skillassay-trial")
    worker.start()
    deadline = time.monotonic() + request.settings.timeout_seconds
    while worker.is_alive() and not stop_requested() and (left := deadline - time.monotonic()) > 0:
        worker.join(min(left, 0.25))  # in slices: a stopped run (run/interrupt.py) stops waiting too
    if worker.is_alive():
        if stop_requested():
            return TrialResult(status="error", error="stopped: the run was interrupted")
        return TrialResult(status="timeout", error=f"timed out after {request.settings.timeout_seconds:g}s")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]


def with_time_left(request: TrialRequest, deadline: float) -> TrialRequest:
    """The request for a retry: its timeout is what is left of the trial's deadline, so all
    attempts together never run past the one timeout the user set."""
    left = max(deadline - time.monotonic(), 0.001)
    if left >= request.settings.timeout_seconds:
        return request
    return replace(request, settings=replace(request.settings, timeout_seconds=round(left, 3)))


def failed_attempt_events(exc: TransientError, attempt: int, sleep: float | None) -> list[dict[str, Any]]:
    """What a failed attempt leaves in the transcript: its own events, then a retry marker."""
    events = list(exc.result.transcript) if exc.result is not None else []
    marker: dict[str, Any] = {"type": "retry", "attempt": attempt, "error": str(exc)}
    if sleep is not None:
        marker["sleep_seconds"] = round(sleep, 3)
    return [*events, marker]


_RETRY_IMPORT = threading.Lock()


def call_with_retries(executor: Executor, request: TrialRequest, policy: RetryPolicy) -> tuple[TrialResult, int]:
    """Run the trial, retrying transient failures with backoff that waits at least the
    provider's Retry-After and never sleeps past the trial's deadline (the timeout covers all
    attempts). When the retries run out, the failed attempts' transcripts are the result's."""
    deadline = time.monotonic() + request.settings.timeout_seconds
    # The first attempt runs before any retry machinery is built: most trials need no other,
    # and building tenacity's loop cost more than the echo executor's whole trial. A transient
    # failure is handed to the loop below as its attempt 1, so what follows is unchanged.
    try:
        return run_with_deadline(executor, request), 1
    except TransientError as exc:
        first: list[TransientError] = [exc]
    except Exception as exc:  # an executor bug is a failed trial with its error, not a crash
        return TrialResult(status="error", error=f"{type(exc).__name__}: {exc}"), 1
    # Imported here, where a transient failure first needs them (most runs never retry), by one
    # worker thread at a time: a dead provider fails every concurrent trial at once.
    with _RETRY_IMPORT:
        from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

        from skillassay.executors.retry import stop_before_deadline, wait_retry_after

    attempts = 0
    history: list[dict[str, Any]] = []  # failed attempts' events and retry markers, in order

    def remember(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, TransientError):
            history.extend(failed_attempt_events(exc, state.attempt_number, state.upcoming_sleep))

    retrying = Retrying(
        stop=stop_after_attempt(policy.attempts) | stop_before_deadline(deadline),
        wait=wait_retry_after(wait_exponential(multiplier=policy.wait_initial, max=policy.wait_max)),
        retry=retry_if_exception_type(TransientError),
        before_sleep=remember,
        reraise=True,
    )
    try:
        for attempt in retrying:
            with attempt:
                attempts += 1
                if first:
                    raise first.pop()  # attempt 1, already run above
                result = run_with_deadline(executor, with_time_left(request, deadline))
                if history:  # a recovered trial still shows what it recovered from
                    result.transcript = [e for e in history if e.get("type") == "retry"] + list(result.transcript)
                return result, attempts
    except TransientError as exc:
        events = [*history, *failed_attempt_events(exc, attempts, None)]
        cut = " (the trial's deadline left no time for another)" if attempts < policy.attempts else ""
        return replace(exc.result or TrialResult(), status="error", transcript=events,
                       error=f"transient error after {attempts} attempts{cut}: {exc}"), attempts
    except Exception as exc:  # an executor bug is a failed trial with its error, not a crash
        return TrialResult(status="error", error=f"{type(exc).__name__}: {exc}"), attempts
    raise AssertionError("unreachable")  # pragma: no cover


_MAX_EXACT_INT = 2**63 - 1


def _plain_json(value: Any, depth: int = 0) -> bool:
    """Whether `value` holds only what pydantic-core's encoder writes byte for byte as json
    does (str keys; str, int, bool, None, lists, dicts): no floats (1e-05 vs 1e-5), no long
    integers, no lone surrogates, nothing for default=str."""
    kind = type(value)
    if kind is str:
        return not _has_surrogate(value)
    if kind is bool or value is None:
        return True
    if kind is int:
        return -_MAX_EXACT_INT <= value <= _MAX_EXACT_INT
    if depth > 32:
        return False
    if kind is list:
        return all(_plain_json(v, depth + 1) for v in value)
    if kind is dict:
        return all(type(k) is str and _plain_json(k) and _plain_json(v, depth + 1) for k, v in value.items())
    return False


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _pretty(event: dict[str, Any]) -> str:
    """json.dumps(event, indent=2, ensure_ascii=False, default=str), through the Rust encoder
    when the output is the same bytes (json's indent falls back to its pure-Python encoder:
    ~0.3 ms a trial of 20,000)."""
    if _plain_json(event):
        return to_json(event, indent=2).decode("utf-8")
    return json.dumps(event, indent=2, ensure_ascii=False, default=str)


def transcript_markdown(events: list[dict[str, Any]]) -> str:
    parts = ["# Transcript\n"]
    for i, event in enumerate(events, 1):
        kind = event.get("type", "event")
        parts.append(f"\n## {i}. {kind}\n\n```json\n{_pretty(event)}\n```\n")
    return "".join(parts)


def execute_trial(trial: Trial, executor: Executor, skill: Skill | None, input_files: list[Path],
                  policy: RetryPolicy, redactor: Callable[[str], str],
                  write_timing: bool = True, sink: FileSink = DIRECT) -> tuple[TrialResult, Metrics, Timing]:
    """Run one trial and write outputs/, transcript.jsonl/.md, outputs/metrics.json and
    timing.json into its run dir, through `sink` (store/writebehind.py: at once, or by a
    write-behind process). grading.json (written by the caller) marks it done."""
    run = trial.run_dir
    outputs = run / "outputs"
    run_s, out_s = os.fspath(run), os.fspath(outputs)  # string paths on the hot path
    # The agent works directly in outputs/ (no scratch dir to create and delete per trial:
    # rmdir is the slowest call on the hot path). Left-overs of a killed attempt go first.
    # An executor that never touches its work dir and has no input files to find there gets
    # no folders made for it: the sink makes them with the answer, and there is nothing to list
    # (when the planner saw no folder for the trial; else a killed attempt's may be there).
    workdir_used = bool(input_files) or executor.writes_workdir
    if workdir_used or not trial.fresh:
        try:
            os.mkdir(run_s)
        except FileNotFoundError:  # the first trial of its configuration folder
            os.makedirs(run_s, exist_ok=True)
        except FileExistsError:  # a killed attempt's: its outputs/ is emptied below
            workdir_used = True
    if workdir_used:
        try:
            os.mkdir(out_s)
        except FileExistsError:
            remove_tree(outputs, run)
            os.mkdir(out_s)
    for src in input_files:
        shutil.copy2(src, outputs / src.name)
    before = snapshot(outputs) if input_files else {}

    prompts = trial.eval.turn_prompts
    request = TrialRequest(prompt=trial.eval.prompt, workdir=outputs, skill=skill, seed=trial.seed,
                           settings=executor.settings, give_up=policy.give_up, max_cost_usd=trial.max_cost_usd,
                           turns=tuple(prompts[1:]))
    start_iso, t0 = now_iso(), time.perf_counter()
    result, attempts = call_with_retries(executor, request, policy)
    wall = time.perf_counter() - t0
    end_iso = now_iso()
    conversation = len(prompts) > 1
    if conversation:
        result = check_turns(result, prompts)
        redact_turns(result, redactor)
        result.transcript = tag_transcript(result)

    created = tidy_outputs(outputs, before) if workdir_used else {}
    answer = redactor(result.final_text)
    result.final_text = answer  # everything downstream (grading included) sees what is on disk
    # Masked once, here (the redactor is idempotent: a second pass finds nothing to mask).
    # In place, not atomically: grading.json, written last, commits the trial (write_before_marker).
    transcript_lines = "".join(json.dumps(e, ensure_ascii=False, default=str) + "\n" for e in result.transcript)
    transcript_lines = redactor(transcript_lines)
    markdown = (turns_markdown(result.transcript, result.turns, _pretty) if conversation
                else transcript_markdown(result.transcript))
    files: list[FileEntry] = [
        (f"{out_s}/{ANSWER_FILE}", answer.encode("utf-8"), False),
        (f"{run_s}/transcript.jsonl", transcript_lines.encode("utf-8"), False),
        (f"{run_s}/transcript.md", redactor(markdown).encode("utf-8"), False),
    ]
    if conversation:  # each turn's answer, which grading reads (grade/turns.py)
        files.append((f"{run_s}/{TURNS_FILE}", redactor(turns_file_text(result)).encode("utf-8"), False))

    # The sizes the walk already read: a second stat of 200,000 files cost seconds.
    output_chars = len(answer) + sum(size for size, _ in created.values())
    listed = capped(list(created))  # 200,000 names would make metrics.json megabytes and every reader slow
    usage = result.usage
    cost, cost_source = trial_cost(executor.name, result.model or executor.settings.model, usage.cost_usd,
                                   usage.input_tokens, usage.output_tokens, usage.cached_input_tokens, usage.raw,
                                   executor.settings.prices, usage.cost_source)
    metrics = Metrics(
        tool_calls=dict(result.tool_calls),
        total_tool_calls=sum(result.tool_calls.values()),
        total_steps=result.steps,
        files_created=listed.names,
        errors_encountered=result.errors_encountered + (1 if result.status != "ok" else 0),
        output_chars=output_chars,
        transcript_chars=len(transcript_lines),
        skill_triggered=result.skill_triggered,
        status=result.status,
        error=redactor(result.error) if result.error else None,
        seed=trial.seed,
        attempts=attempts,
        executor=executor.name,
        model=result.model or executor.settings.model,
        usage={"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
               "cached_input_tokens": usage.cached_input_tokens, "cost_usd": cost, "cost_source": cost_source,
               "raw": usage.raw, **usage_provenance(usage)},
    )
    if listed.omitted:  # set (and so written) only when the list is capped
        metrics.files_created_total = listed.total
    figures = (turn_figures(result, executor.name, result.model or executor.settings.model, executor.settings.prices)
               if conversation else None)
    if figures is not None:  # set (and so written) only for a conversation
        metrics.turns = figures
    timing = Timing(
        total_tokens=usage.total_tokens,
        duration_ms=result.agent_duration_ms if result.agent_duration_ms is not None else int(wall * 1000),
        total_duration_seconds=round(wall, 6),
        executor_start=start_iso,
        executor_end=end_iso,
        executor_duration_seconds=round(wall, 6),
    )
    if figures is not None:
        timing.turns = timing_turns(figures)
    files.append(json_entry(f"{out_s}/metrics.json", metrics, redactor))
    if write_timing:  # the engine writes it once, after grading adds the grader's times
        files.append(json_entry(f"{run_s}/timing.json", timing, redactor))
    sink.submit(files)
    return result, metrics, timing


def usage_provenance(usage: Usage) -> dict[str, str]:
    """metrics.json's token_source and token_warning, when the executor gave them."""
    out = {"token_source": usage.source, "token_warning": usage.warning}
    return {k: v for k, v in out.items() if v is not None}


def token_note(run_dirs: list[Path]) -> str | None:
    """Trials whose agent gave two token counts that disagree: shown after the run, never
    silently resolved (the larger is recorded; metrics.json says which and why)."""
    if not run_dirs:
        return None
    return (f"{len(run_dirs)} trials' token counts disagreed between the agent's own accounts (e.g. {run_dirs[0]}); "
            "the larger is recorded, and their metrics.json's token_warning says both")


AGENT_DIRS = frozenset({".claude", ".agents", ".codex"})


def tidy_outputs(outputs: Path, before: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """Leave in outputs/ only what the agent produced: drop input files it did not change and
    the skill an executor installed for discovery (.claude/, .agents/). Returns the files
    created or changed, relative to outputs/, in name order, with their (size, mtime_ns)."""
    # One walk of outputs/ (listing its top level apart first doubled the cost at 200,000 files):
    # the agent folders it does not enter are removed after it.
    after, agent_dirs = walk_outputs(outputs)
    for name in agent_dirs:
        remove_tree(outputs / name, outputs)
    for rel, sig in before.items():
        if after.get(rel) == sig:
            os.unlink(outputs / rel)
            del after[rel]
    return dict(sorted(after.items()))
