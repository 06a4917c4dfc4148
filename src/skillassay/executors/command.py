"""The `command` executor: benchmark any agent that has a command line (a coding-agent CLI, a
script around an in-house agent...). skillassay fills an argv template, runs it in the trial's
work dir in its own process group, and takes the final answer from stdout or from a file.

How the skill reaches the agent is the command's business: it gets the skill folder as
{skill_dir} (an empty string in the baseline arm) and in SKILLASSAY_SKILL_DIR; in a trigger eval
the other installed skills' folders come in SKILLASSAY_OTHER_SKILL_DIRS (os.pathsep-separated).

Which skills the agent loaded only the command can know. It reports them through one marker
file: the name of each skill it loaded, one per line, in the file named by
SKILLASSAY_LOADED_SKILLS_FILE (a path outside the work dir, so it is never taken for the
agent's output). In a benchmark trial an existing file (even empty) makes `skill_triggered`
true or false; no file leaves it unknown (null), never "not loaded", since most commands never
say. `skillassay triggers --executor command` reads the same file, where no file means no
skill was loaded (a trigger eval's command is there to report it).

A multi-turn eval runs the command once per turn, in the same work dir: {prompt} is that turn's
message, SKILLASSAY_TURN its number (1-based) and SKILLASSAY_TURNS how many there are, and
SKILLASSAY_HISTORY_FILE a JSON file (outside the work dir, read-only to a confined command) with
the conversation before this turn, [{"role": "user" | "assistant", "content": ...}, ...] (an
empty list on turn 1): the command carries the conversation, by replaying it or by its own
session state. An answer_file is removed before each later turn, so a stale answer is never
taken for the new one."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from skillassay.errors import InputError
from skillassay.executors.agent_loop import ToolError, confine, truncate
from skillassay.executors.base import Executor, ExecutorSettings, TrialRequest, TrialResult
from skillassay.executors.conversation import request_prompts, run_turns
from skillassay.executors.group_run import run_in_group
from skillassay.sandbox import named_paths, resolved, scrubbed
from skillassay.store.layout import EVALS_DIR, copy_skill_tree

PLACEHOLDER = re.compile(r"\{(prompt|workdir|skill_dir|model|seed)\}")
TRANSCRIPT_OUTPUT_LIMIT = 200_000


def fill_argv(template: list[str], values: dict[str, str]) -> list[str]:
    """Substitute in one pass, so a prompt that itself contains '{workdir}' stays literal, and
    without str.format, so braces in a template (JSON, shell) need no escaping."""
    return [PLACEHOLDER.sub(lambda m: values[m.group(1)], arg) for arg in template]


def _argv_template(options: dict[str, Any]) -> list[str]:
    argv = options.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise InputError.one("executor options", "argv",
                             "the command executor needs options.argv: a non-empty list of "
                             "strings, e.g. [\"my-agent\", \"--prompt\", \"{prompt}\"]")
    return argv


class CommandExecutor(Executor):
    """Options: argv (required), answer_file, env (extra environment variables)."""

    name: ClassVar[str] = "command"
    handles_timeout: ClassVar[bool] = True  # deadline enforced in run(), children killed
    reports_tokens: ClassVar[bool] = False  # a command's stdout carries no token counts
    supports_turns: ClassVar[bool] = True  # once per turn, with the history in a file

    def __init__(self, settings: ExecutorSettings) -> None:
        super().__init__(settings)
        self.template = _argv_template(settings.options)
        self._views: dict[Path, Path] = {}  # skill folder -> its copy without evals/
        self._views_lock = threading.Lock()
        self._views_root: tempfile.TemporaryDirectory[str] | None = None

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        return True, "runs the command given in options.argv"

    def ready(self) -> str | None:
        """A program that is not there would fail every trial: say so before the first. A
        template placeholder or a path relative to the work dir can only be judged per trial."""
        program = self.template[0]
        if PLACEHOLDER.search(program) or (os.sep in program and not os.path.isabs(program)):
            return None
        if os.path.isabs(program):
            return None if os.access(program, os.X_OK) and os.path.isfile(program) else \
                f"options.argv[0] {program!r} not found or not executable"
        return None if shutil.which(program) else f"options.argv[0] {program!r} not found on PATH"

    def run(self, request: TrialRequest) -> TrialResult:
        if not request.turns:
            return self.run_once(request, request.prompt, None)
        history: list[dict[str, str]] = []
        total = str(len(request.turns) + 1)
        answer_file = request.settings.options.get("answer_file")

        def step(k: int, prompt: str) -> TrialResult:
            if k > 1 and answer_file:
                with contextlib.suppress(ToolError, OSError):
                    confine(request.workdir, str(answer_file)).unlink(missing_ok=True)
            one = self.run_once(request, prompt, (k, total, list(history)))
            history.extend([{"role": "user", "content": prompt}, {"role": "assistant", "content": one.final_text}])
            return one

        return run_turns(request_prompts(request), step)

    def run_once(self, request: TrialRequest, prompt: str,
                 turn: tuple[int, str, list[dict[str, str]]] | None) -> TrialResult:
        """One run of the command: a whole trial, or turn k of a conversation (`turn`: its
        number, the number of turns and the history before it)."""
        opts = request.settings.options
        skill_dir = str(self._agent_view(request.skill.path)) if request.skill is not None else ""
        values = {"prompt": prompt, "workdir": str(request.workdir),
                  "skill_dir": skill_dir, "model": request.settings.model or "",
                  "seed": str(request.seed)}
        argv = fill_argv(self.template, values)
        transcript: list[dict[str, Any]] = [{"type": "command", "argv": argv}]
        started = time.monotonic()
        sandbox = resolved(request.settings.sandbox)
        with tempfile.TemporaryDirectory(prefix="skillassay-marker-") as marker_dir:
            marker = Path(marker_dir) / "loaded-skills"
            others = [self._agent_view(s.path) for s in request.extra_skills]
            extra = {str(k): str(v) for k, v in (opts.get("env") or {}).items()}
            ours = {"SKILLASSAY_WORKDIR": str(request.workdir), "SKILLASSAY_SKILL_DIR": skill_dir,
                    "SKILLASSAY_OTHER_SKILL_DIRS": os.pathsep.join(map(str, others)),
                    "SKILLASSAY_LOADED_SKILLS_FILE": str(marker), "SKILLASSAY_SEED": str(request.seed)}
            if turn is not None:
                history_file = Path(marker_dir) / "history.json"
                history_file.write_text(json.dumps(turn[2], ensure_ascii=False), encoding="utf-8")
                ours |= {"SKILLASSAY_TURN": str(turn[0]), "SKILLASSAY_TURNS": turn[1],
                         "SKILLASSAY_HISTORY_FILE": str(history_file)}
            # Confined, the command gets no secret of ours: only what `-o env` names for it.
            env = scrubbed(os.environ, {**extra, **ours}) if sandbox.isolated else {**os.environ, **extra, **ours}
            # Paths the template names itself (the agent's script) stay visible; never a path that
            # came in through a placeholder: an eval's prompt is untrusted ("/root/.ssh/id_rsa").
            named = named_paths([arg for arg in self.template if not PLACEHOLDER.search(arg)])
            visible = [Path(skill_dir)] * bool(skill_dir) + others + named
            try:
                code, out, err = run_in_group(
                    argv, request.workdir, request.settings.timeout_seconds, env, sandbox=sandbox,
                    writable=[Path(marker_dir)],
                    readonly=[p for p in dict.fromkeys(visible) if p != request.workdir])
            except OSError as exc:  # command not found, not executable
                return TrialResult(status="error", error=f"could not start {argv[0]!r}: {exc}",
                                   transcript=transcript, model=request.settings.model)
            marker_event = _marker_event(marker)
            transcript.append(marker_event)
        duration = int((time.monotonic() - started) * 1000)
        transcript += [{"type": "stdout", "text": truncate(out, TRANSCRIPT_OUTPUT_LIMIT)},
                       {"type": "stderr", "text": truncate(err, TRANSCRIPT_OUTPUT_LIMIT)},
                       {"type": "exit", "code": code, "duration_ms": duration}]
        result = TrialResult(final_text=out, transcript=transcript, steps=1,
                             agent_duration_ms=duration, model=request.settings.model)
        under_test = request.skill.name if request.skill is not None else request.settings.skill_under_test
        if under_test and marker_event["marker_written"]:
            # In the baseline arm, loading a skill of that name is contamination (made INVALID).
            result.skill_triggered = under_test in marker_event["names"]
        if code is None:
            result.status = "timeout"
            result.error = (f"timed out after {request.settings.timeout_seconds:g}s; process "
                            "group killed (partial output kept)")
            return result
        if code != 0:
            result.status = "error"
            result.error = f"exit code {code}: {err.strip()[-2000:]}"
            result.errors_encountered = 1
        answer_file = opts.get("answer_file")
        if answer_file:
            self._read_answer(result, request.workdir, str(answer_file))
        return result

    def _agent_view(self, skill_path: Path) -> Path:
        """The skill as the command's agent may see it: without the top-level evals/ (the eval
        set's prompts and expected answers), as CLI agents get it. One copy per skill for the
        executor's life, made only when there is an evals/ to leave out."""
        if not (skill_path / EVALS_DIR).exists():
            return skill_path
        with self._views_lock:
            if skill_path not in self._views:
                if self._views_root is None:
                    self._views_root = tempfile.TemporaryDirectory(prefix="skillassay-skill-")
                dest = Path(self._views_root.name) / str(len(self._views)) / skill_path.name
                copy_skill_tree(skill_path, dest, without_evals=True)
                self._views[skill_path] = dest
            return self._views[skill_path]

    def close(self) -> None:
        with self._views_lock:
            if self._views_root is not None:
                self._views_root.cleanup()
            self._views_root, self._views = None, {}

    def skills_loaded(self, result: TrialResult, names: Sequence[str]) -> list[str] | None:
        reported: list[Any] = next((e.get("names") or [] for e in result.transcript
                                    if e.get("type") == "skills_loaded"), [])
        return [n for n in dict.fromkeys(reported) if isinstance(n, str) and n in names]

    @staticmethod
    def _read_answer(result: TrialResult, workdir: Path, answer_file: str) -> None:
        """The answer file replaces stdout as the final text; its absence is an error, since
        grading stdout instead would silently grade the wrong thing."""
        try:
            path = confine(workdir, answer_file)
        except ToolError as exc:
            result.status, result.error = "error", f"answer_file: {exc}"
            return
        if not path.is_file():
            if result.status == "ok":
                result.status = "error"
                result.error = f"answer_file {answer_file!r} was not written"
            return
        result.final_text = path.read_text(encoding="utf-8", errors="replace")


MARKER_LIMIT = 10_000  # characters of the marker file read: names, not a transcript


def _marker_event(marker: Path) -> dict[str, Any]:
    """The marker file as a transcript event, so the figures can be checked against it later."""
    text = ""
    with contextlib.suppress(OSError):
        text = marker.read_text(encoding="utf-8", errors="replace")[:MARKER_LIMIT]
    names = [line.strip() for line in text.splitlines() if line.strip()]
    return {"type": "skills_loaded", "names": names, "marker_written": marker.exists()}
