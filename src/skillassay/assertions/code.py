"""Checks written as code: a Python function, or a shell command.

Both run in a child process group with a timeout, because evals are code from other people
and a check that hangs (or forks something that does) must not hang the benchmark: on
timeout the whole group is killed. A `command` runs in a throwaway COPY of outputs/, so a
check that writes or deletes cannot change what later checks and the judge see. They run with
the user's privileges, so they get the environment without secrets (names with KEY, TOKEN,
SECRET, PASSWORD...), as the agent's run_shell does: an eval file must not read the API keys."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from skillassay.assertions.base import AssertionConfigError, AssertionPlugin, RunView, Verdict
from skillassay.assertions.paths import UsesEvalDir
from skillassay.executors.subprocess_util import run_process_group, tail
from skillassay.store.redact import without_secrets

KILL_GRACE_SECONDS = 0.5
_FUNCTION = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class CheckError(RuntimeError):
    """The check itself produced no verdict (it hung or crashed): the grader records the
    expectation as ungraded with this message, never as passed or failed."""


def timeout_param(plugin: AssertionPlugin, default: float) -> float:
    if "timeout" not in plugin.params:
        return default
    value = float(plugin.require("timeout", (int, float)))
    if value <= 0:
        raise AssertionConfigError(f"'{plugin.spec.type}' parameter 'timeout' must be > 0 seconds, got {value:g}")
    return value


def view_payload(run: RunView) -> dict:
    """The RunView as JSON for the child process (which rebuilds it)."""
    return {
        "final_text": run.final_text, "outputs_dir": str(run.outputs_dir), "run_dir": str(run.run_dir),
        "prompt": run.prompt, "eval_dir": str(run.eval_dir) if run.eval_dir else None,
        "metrics": run.metrics.model_dump(mode="json"), "timing": run.timing.model_dump(mode="json"),
    }


def module_findable(module: str, eval_dir: Path | None) -> bool:
    """Without importing (which would run the user's code at configuration time)."""
    top = module.split(".")[0]
    if eval_dir is not None and ((eval_dir / f"{top}.py").is_file() or (eval_dir / top / "__init__.py").is_file()):
        return True
    return importlib.util.find_spec(top) is not None


class PythonCheck(AssertionPlugin, UsesEvalDir):
    """`function: "module:function"` receives the RunView and returns (passed, evidence), a
    bool, or a Verdict. The module is imported from the eval set folder first."""

    type_name = "python"
    DEFAULT_TIMEOUT = 30.0

    def configure(self) -> None:
        self.function: str = self.require("function", str)
        if not _FUNCTION.match(self.function):
            raise AssertionConfigError(f"'python' parameter 'function' must look like 'module:function', got {self.function!r}")
        self.timeout = timeout_param(self, self.DEFAULT_TIMEOUT)

    def bind_eval_dir(self, eval_dir: Path) -> None:
        super().bind_eval_dir(eval_dir)
        module = self.function.split(":")[0]
        if not module_findable(module, eval_dir):
            raise AssertionConfigError(f"'python' module {module!r} not found in {eval_dir} nor on sys.path")

    def describe(self) -> str:
        return f"The check {self.function} passes"

    def check(self, run: RunView) -> Verdict:
        eval_dir = self.eval_dir or run.eval_dir
        with tempfile.TemporaryDirectory(prefix="skillassay-py-") as tmp:
            request, result = Path(tmp) / "request.json", Path(tmp) / "result.json"
            request.write_text(json.dumps({"function": self.function, "eval_dir": str(eval_dir) if eval_dir else None,
                                           "view": view_payload(run)}), encoding="utf-8")
            env = without_secrets(os.environ)  # code from evals.json gets no API keys
            if eval_dir:
                env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(eval_dir), env.get("PYTHONPATH")]))
            outcome = run_process_group(
                [sys.executable, "-m", "skillassay.assertions._pycheck", str(request), str(result)],
                cwd=eval_dir or run.run_dir, env=env, timeout_seconds=self.timeout, grace_seconds=KILL_GRACE_SECONDS)
            if outcome.timed_out:
                raise CheckError(f"python check {self.function} timed out after {self.timeout:g} s (process group killed)")
            data = json.loads(result.read_text(encoding="utf-8")) if result.is_file() else {}
        if "error" in data or "passed" not in data:
            detail = data.get("error") or tail(outcome.stderr, 500) or f"exit code {outcome.returncode}"
            raise CheckError(f"python check {self.function} failed to run: {detail}")
        return Verdict(bool(data["passed"]), str(data.get("evidence") or f"{self.function} returned {data['passed']}"))


class CommandCheck(AssertionPlugin):
    """`command` (a shell string, or an argv list) passes on exit code 0. It runs in a copy of
    outputs/ with SKILLASSAY_OUTPUTS_DIR and SKILLASSAY_ANSWER_FILE set. A command that does
    not finish within `timeout` fails: it did not exit 0."""

    type_name = "command"
    DEFAULT_TIMEOUT = 60.0
    TAIL_CHARS = 400

    def configure(self) -> None:
        command = self.require("command", (str, list))
        if isinstance(command, list) and (not command or not all(isinstance(a, str) for a in command)):
            raise AssertionConfigError(f"'command' parameter 'command' must be a string or a non-empty list of strings, got {command!r}")
        if isinstance(command, str) and not command.strip():
            raise AssertionConfigError("'command' parameter 'command' must not be empty")
        self.argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        self.shown = command if isinstance(command, str) else " ".join(command)
        self.timeout = timeout_param(self, self.DEFAULT_TIMEOUT)

    def describe(self) -> str:
        return f"The command `{self.shown}` exits 0"

    def check(self, run: RunView) -> Verdict:
        with tempfile.TemporaryDirectory(prefix="skillassay-cmd-") as tmp:
            work = Path(tmp) / "outputs"
            if run.outputs_dir.is_dir():
                shutil.copytree(run.outputs_dir, work, symlinks=True)
            else:
                work.mkdir()
            env = {**without_secrets(os.environ), "SKILLASSAY_OUTPUTS_DIR": str(work), "SKILLASSAY_ANSWER_FILE": str(work / "answer.md")}
            try:
                outcome = run_process_group(self.argv, cwd=work, env=env, timeout_seconds=self.timeout,
                                            grace_seconds=KILL_GRACE_SECONDS)
            except FileNotFoundError as exc:
                return Verdict(False, f"Command not found: {exc.filename or self.argv[0]}")
        stdout = tail("\n".join(outcome.stdout_lines), self.TAIL_CHARS)
        stderr = tail(outcome.stderr, self.TAIL_CHARS)
        streams = f"; stdout: {stdout!r}" + (f"; stderr: {stderr!r}" if stderr else "")
        if outcome.timed_out:
            return Verdict(False, f"`{self.shown}` timed out after {self.timeout:g} s (process group killed){streams}")
        code = outcome.returncode
        return Verdict(code == 0, f"`{self.shown}` exited {code} in {outcome.duration_ms / 1000:.2f} s{streams}")
