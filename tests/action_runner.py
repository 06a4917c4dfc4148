"""Runs a composite action's steps here as a GitHub-hosted runner would (act cannot run offline).

Honestly limited to what action.yml uses:
- `run:` steps with `shell: bash`, run as the runner runs them (`bash --noprofile --norc -eo
  pipefail FILE`), in GITHUB_WORKSPACE, with the runner's variables (GITHUB_OUTPUT,
  GITHUB_STEP_SUMMARY, GITHUB_ENV, GITHUB_PATH, GITHUB_ACTION_PATH, ...) and the step's `env:`;
  outputs read back in both of GITHUB_OUTPUT's forms (name=value and name<<DELIMITER);
- `${{ }}` expressions in `env:`, `with:`, `if:` and the action's outputs: the contexts inputs,
  steps, github, env and runner; literals; == != ! && || and parentheses with GitHub's rules
  (case-insensitive string equality, && and || yield an operand); always(), success(),
  failure(), cancelled(); a step's `if:` defaults to success();
- three `uses:` actions, by their documented behaviour, against local folders:
  actions/cache/restore@v4 (exact key, else the newest entry matching each restore-keys prefix
  in order; output cache-hit only on the exact key), actions/cache/save@v4 (a key that exists is
  not overwritten: a warning, as GitHub's cache is immutable) and actions/upload-artifact@v4
  (the paths copied under ARTIFACTS/NAME; a name used twice in a run is an error).
Anything else (other actions, other shells, containers) raises NotImplementedError."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||!|\(|\)|,)"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*))")


@dataclass
class StepResult:
    name: str
    outcome: str  # success | failure | skipped
    output: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class Runner:
    action_dir: Path
    workspace: Path  # GITHUB_WORKSPACE: the checked-out repository
    home: Path  # RUNNER_TEMP, the cache and the artifacts live under it
    github: dict[str, Any]  # the github context (event_name, event, repository, sha, token, ...)
    env: dict[str, str] = field(default_factory=dict)
    steps: list[StepResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _status: str = "success"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    @property
    def artifacts(self) -> Path:
        """This workflow run's artifacts (names are unique within a run, not across runs)."""
        return self.home / "artifacts" / str(self.github["run_id"])

    # -------------------------------------------------------------- expressions

    def evaluate(self, expr: str, inputs: dict[str, str]) -> Any:
        tokens = [m for m in _TOKEN.finditer(expr) if m.group().strip()]
        if "".join(m.group().strip() for m in tokens) != "".join(expr.split()):
            raise NotImplementedError(f"expression not understood: {expr}")
        pos = 0

        def peek() -> str | None:
            return tokens[pos].group().strip() if pos < len(tokens) else None

        def take() -> re.Match[str]:
            nonlocal pos
            pos += 1
            return tokens[pos - 1]

        def primary() -> Any:
            m = take()
            if m.group("str") is not None:
                return m.group("str")[1:-1].replace("''", "'")
            if m.group("num") is not None:
                return float(m.group("num"))
            if m.group("op") == "(":
                value = or_expr()
                assert take().group().strip() == ")"
                return value
            if m.group("op") == "!":
                return not truthy(primary())
            name = m.group("name")
            if peek() == "(":
                take()
                args = []
                while peek() != ")":
                    args.append(or_expr())
                    if peek() == ",":
                        take()
                take()
                return self._function(name, args)
            return self._lookup(name, inputs)

        def comparison() -> Any:
            left = primary()
            while peek() in ("==", "!="):
                op = take().group().strip()
                right = primary()
                left = equal(left, right) if op == "==" else not equal(left, right)
            return left

        def and_expr() -> Any:
            left = comparison()
            while peek() == "&&":
                take()
                right = comparison()
                left = right if truthy(left) else left
            return left

        def or_expr() -> Any:
            left = and_expr()
            while peek() == "||":
                take()
                right = and_expr()
                left = left if truthy(left) else right
            return left

        value = or_expr()
        if pos != len(tokens):
            raise NotImplementedError(f"expression not understood: {expr}")
        return value

    def _function(self, name: str, args: list[Any]) -> Any:
        name = name.lower()
        if name == "always":
            return True
        if name == "success":
            return self._status == "success"
        if name == "failure":
            return self._status == "failure"
        if name == "cancelled":
            return False
        raise NotImplementedError(f"function {name}()")

    def _lookup(self, name: str, inputs: dict[str, str]) -> Any:
        if name in ("true", "false"):
            return name == "true"
        if name == "null":
            return None
        head, _, rest = name.partition(".")
        contexts: dict[str, Any] = {
            "inputs": inputs, "github": self.github, "env": self.env,
            "runner": {"temp": str(self.home / "tmp"), "os": "Linux"},
            "steps": {s.name: {"outputs": s.outputs, "outcome": s.outcome, "conclusion": s.outcome}
                      for s in self.steps}}
        if head not in contexts:
            raise NotImplementedError(f"context {head}")
        value: Any = contexts[head]
        for part in rest.split(".") if rest else []:
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def substitute(self, text: str, inputs: dict[str, str]) -> str:
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: to_string(self.evaluate(m.group(1), inputs)), str(text))

    def condition(self, text: str | None, inputs: dict[str, str]) -> bool:
        expr = (text or "success()").strip()
        if expr.startswith("${{") and expr.endswith("}}"):
            expr = expr[3:-2]
        if not re.search(r"\b(always|success|failure|cancelled)\(", expr):
            expr = f"success() && ({expr})"
        return truthy(self.evaluate(expr, inputs))

    # -------------------------------------------------------------- running

    def run_action(self, given: dict[str, str]) -> dict[str, str]:
        """Run every step with these inputs; the action's outputs."""
        action = yaml.safe_load((self.action_dir / "action.yml").read_text(encoding="utf-8"))
        assert action["runs"]["using"] == "composite"
        inputs: dict[str, str] = {}
        for key, spec in (action.get("inputs") or {}).items():
            default = str((spec or {}).get("default", ""))
            inputs[key] = str(given[key]) if key in given else self.substitute(default, {})
        unknown = set(given) - set(inputs)
        assert not unknown, f"inputs the action does not declare: {unknown}"
        for index, step in enumerate(action["runs"]["steps"]):
            name = step.get("id") or f"__{index}"
            if not self.condition(step.get("if"), inputs):
                self.steps.append(StepResult(name, "skipped"))
                continue
            started = time.monotonic()
            result = self._uses(step, name, inputs) if "uses" in step else self._run(step, name, inputs)
            result.seconds = time.monotonic() - started
            self.steps.append(result)
            if result.outcome == "failure":
                self._status = "failure"
        return {key: self.substitute(spec["value"], inputs) for key, spec in (action.get("outputs") or {}).items()}

    def base_env(self) -> dict[str, str]:
        event_path = self.home / "event.json"
        event_path.write_text(json.dumps(self.github.get("event") or {}), encoding="utf-8")
        for sub in ("tmp", "tool"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        host = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # a runner has none: the installed package runs
        return {**host, **self.env, "CI": "true", "GITHUB_ACTIONS": "true",
                "GITHUB_WORKSPACE": str(self.workspace), "GITHUB_ACTION_PATH": str(self.action_dir),
                "GITHUB_EVENT_NAME": str(self.github["event_name"]), "GITHUB_EVENT_PATH": str(event_path),
                "GITHUB_REPOSITORY": str(self.github["repository"]), "GITHUB_SHA": str(self.github["sha"]),
                "GITHUB_REF": str(self.github.get("ref", "")), "GITHUB_RUN_ID": str(self.github["run_id"]),
                "GITHUB_RUN_ATTEMPT": "1", "GITHUB_SERVER_URL": str(self.github["server_url"]),
                "GITHUB_API_URL": str(self.github["api_url"]), "GITHUB_STEP_SUMMARY": str(self.home / "summary.md"),
                "RUNNER_TEMP": str(self.home / "tmp"), "RUNNER_TOOL_CACHE": str(self.home / "tool"),
                "RUNNER_OS": "Linux"}

    def _run(self, step: dict[str, Any], name: str, inputs: dict[str, str]) -> StepResult:
        if step.get("shell") != "bash":
            raise NotImplementedError(f"shell {step.get('shell')!r}")
        self.home.mkdir(parents=True, exist_ok=True)
        files = {k: self.home / f"{k.lower()}-{len(self.steps)}" for k in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH")}
        for f in files.values():
            f.write_text("", encoding="utf-8")
        script = self.home / f"step-{len(self.steps)}.sh"
        script.write_text(step["run"], encoding="utf-8")  # the script as written: no ${{ }} pasted in
        assert "${{" not in step["run"], f"step {name}: an expression pasted into a script"
        env = {**self.base_env(), **{k: str(v) for k, v in files.items()},
               **{k: self.substitute(v, inputs) for k, v in (step.get("env") or {}).items()}}
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=self.workspace,
                              env=env, capture_output=True, text=True, timeout=900)
        outputs = parse_file_commands(files["GITHUB_OUTPUT"].read_text(encoding="utf-8"))
        self.env.update(parse_file_commands(files["GITHUB_ENV"].read_text(encoding="utf-8")))
        for line in files["GITHUB_PATH"].read_text(encoding="utf-8").splitlines():
            self.env["PATH"] = f"{line}:{self.env.get('PATH', os.environ['PATH'])}"
        return StepResult(name, "success" if proc.returncode == 0 else "failure", proc.stdout + proc.stderr, outputs)

    def _uses(self, step: dict[str, Any], name: str, inputs: dict[str, str]) -> StepResult:
        with_ = {k: self.substitute(v, inputs) for k, v in (step.get("with") or {}).items()}
        action = step["uses"]
        if action == "actions/cache/restore@v4":
            return StepResult(name, "success", "", self._restore(with_))
        if action == "actions/cache/save@v4":
            return StepResult(name, "success", self._save(with_))
        if action == "actions/upload-artifact@v4":
            return self._upload(name, with_)
        raise NotImplementedError(f"uses: {action}")

    def _paths(self, text: str) -> list[str]:
        return [line.strip() for line in text.splitlines() if line.strip()]

    def _restore(self, w: dict[str, str]) -> dict[str, str]:
        entries = {p.stem: p for p in self.cache_dir.glob("*.tar")} if self.cache_dir.is_dir() else {}
        hit = entries.get(w["key"])
        matched = w["key"] if hit else None
        for prefix in self._paths(w.get("restore-keys", "")) if hit is None else []:
            found = sorted((p for k, p in entries.items() if k.startswith(prefix)), key=lambda p: p.stat().st_mtime)
            if found:
                hit, matched = found[-1], found[-1].stem
                break
        if hit is None:
            return {"cache-hit": "false"}
        with tarfile.open(hit) as tar:
            tar.extractall(self.workspace, filter="tar")
        return {"cache-hit": str(matched == w["key"]).lower(), "cache-primary-key": w["key"],
                "cache-matched-key": matched or ""}

    def _save(self, w: dict[str, str]) -> str:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        target = self.cache_dir / f"{w['key']}.tar"
        if target.exists():
            self.warnings.append(f"Failed to save: cache entry with key {w['key']} already exists")
            return self.warnings[-1]
        with tarfile.open(target, "w") as tar:
            for path in self._paths(w["path"]):
                if (self.workspace / path).exists():
                    tar.add(self.workspace / path, arcname=path)
        time.sleep(0.01)  # distinct mtimes: "newest" is well defined between saves
        return f"saved {target.name}"

    def _upload(self, name: str, w: dict[str, str]) -> StepResult:
        target = self.artifacts / w["name"]
        if target.exists():
            return StepResult(name, "failure", f"an artifact named {w['name']} already exists in this run")
        copied = 0
        for path in self._paths(w["path"]):
            source = self.workspace / path
            if source.is_dir():
                shutil.copytree(source, target / path, symlinks=True)
                copied += 1
            elif source.is_file():
                (target / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / path)
                copied += 1
        if not copied and w.get("if-no-files-found") == "error":
            return StepResult(name, "failure", "no files found")
        return StepResult(name, "success", f"uploaded {copied} paths")


def truthy(value: Any) -> bool:
    return value not in (False, 0, 0.0, "", None) and value == value  # NaN is falsy


def to_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else str(value)
    return value if isinstance(value, str) else json.dumps(value)


def equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    return bool(_number(a) == _number(b))


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value) if str(value).strip() else 0.0
    except ValueError:
        return float("nan")


def parse_file_commands(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT / GITHUB_ENV: `name=value` lines and `name<<DELIMITER` blocks."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            out[key] = "\n".join(lines[i + 1:end])
            i = end + 1
            continue
        if "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
        i += 1
    return out
