"""The steps of action.yml that are more than a command line, run as
`python3 -m skillassay.cli.github_action plan|outputs|post`: they read what a GitHub runner
sets (GITHUB_* variables, the event file) and the Action's inputs (SA_* variables, mapped in
action.yml's `env:` so no input is ever pasted into a script), and write step outputs.

- plan: the workspace, the cache key (skill and eval hashes, so an unchanged skill's iteration
  is restored and resumed instead of run again) and its fallbacks, the head commit, the pull
  request, whether to comment; and the fork refusals (docs/ci.md, "Pull requests from forks").
- outputs: the verdict, pass rates, effect, cost and exit code from the iteration the run wrote.
- post: the sticky comment (cli/github_comments.py)."""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

RUN_EVENTS_WITH_SECRETS = ("pull_request_target", "workflow_run")  # they run with the base repository's secrets


class Refused(Exception):
    """The Action will not do this here; the message says why (shown as a GitHub error)."""


def event_of(env: Mapping[str, str]) -> dict[str, Any]:
    path = env.get("GITHUB_EVENT_PATH")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        data = {}
    return data if isinstance(data, dict) else {}


def pull_request(event: dict[str, Any]) -> dict[str, Any]:
    pr = event.get("pull_request")
    return pr if isinstance(pr, dict) else {}


def from_fork(pr: dict[str, Any]) -> bool:
    """A pull request whose head lives in another repository (a deleted fork counts as one)."""
    head = (pr.get("head") or {}).get("repo") or {}
    base = (pr.get("base") or {}).get("repo") or {}
    return bool(pr) and head.get("full_name") != base.get("full_name")


def untrusted_head(event_name: str, event: dict[str, Any]) -> bool:
    """The code this run would benchmark comes from another repository: a fork's pull request, or a
    workflow_run started by one."""
    if from_fork(pull_request(event)):
        return True
    run = event.get("workflow_run") if event_name == "workflow_run" else None
    if isinstance(run, dict):
        head = (run.get("head_repository") or {}).get("full_name")
        return head != ((event.get("repository") or {}).get("full_name"))
    return False


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "-", text)[:60] or "skill"


def plan(env: Mapping[str, str]) -> dict[str, str]:
    mode = env.get("SA_MODE", "run") or "run"
    if mode not in ("run", "merge", "comment"):
        raise Refused(f"input mode: expected run, merge or comment, got {mode!r}")
    event_name = env.get("GITHUB_EVENT_NAME", "")
    event = event_of(env)
    pr = pull_request(event)
    fork = untrusted_head(event_name, event)
    if mode != "comment" and fork and event_name in RUN_EVENTS_WITH_SECRETS:
        raise Refused(f"refusing to benchmark a fork's pull request on `{event_name}`: that event runs with this "
                      "repository's secrets and write token, and the fork's skill, evals and checks would run "
                      "with them. Benchmark on `pull_request` (no secrets) and post the comment from a "
                      "`workflow_run` workflow: see docs/ci.md, Pull requests from forks")
    out = {"mode": mode, "fork": str(fork).lower(), "event": event_name}
    out["head-sha"] = str((pr.get("head") or {}).get("sha") or env.get("GITHUB_SHA", ""))
    out["pr-number"] = str(pr.get("number") or "")
    if mode == "comment":
        return out | {"comment": "true"}
    skill = Path(env.get("SA_SKILL", ""))
    if not env.get("SA_SKILL") or not (skill / "SKILL.md").is_file():
        raise Refused(f"input skill: {str(skill)!r} is not a skill folder (no SKILL.md in it)")
    name = safe_name(skill.resolve().name)
    workspace = env.get("SA_WORKSPACE") or f".skillassay/{name}"
    out |= {"name": name, "workspace": workspace, "reports": f"{workspace}-reports"}
    out |= cache_keys(name, skill, env.get("SA_CONFIG") or None, env.get("GITHUB_RUN_ID", "0"),
                      env.get("GITHUB_RUN_ATTEMPT", "1"), env.get("SA_SHARD", ""))
    wanted = env.get("SA_COMMENT", "auto") or "auto"
    comment = wanted == "true" or (wanted == "auto" and bool(pr) and event_name == "pull_request")
    # A fork's pull_request run has a read-only token: it leaves the comment in its artifact instead.
    out["comment"] = str(comment and not fork and not env.get("SA_SHARD")).lower()
    # Only runs that are no pull request save: a pull request then always restores the base branch's.
    out["save-cache"] = str(env.get("SA_CACHE", "true") == "true" and not pr and mode != "comment"
                            and not env.get("SA_SHARD")).lower()  # a share is no iteration to resume or compare with
    shard = env.get("SA_SHARD", "")
    out["artifact"] = f"skillassay-{name}" + (f"-shard-{shard.replace('/', '-of-')}" if shard else "")
    return out


def cache_keys(name: str, skill: Path, config: str | None, run_id: str, attempt: str, shard: str) -> dict[str, str]:
    """Most specific first: the same skill and evals (the iteration resumes, nothing runs), the same
    evals (the last iteration is the baseline compared with), then any iteration of this skill."""
    from skillassay.run.plan import hash_file, hash_tree

    evals = skill / "evals"
    evals_hash = hash_tree(evals) if evals.is_dir() else "none"
    if config and Path(config).is_file():
        evals_hash = hash_tree(evals)[:8] + hash_file(Path(config))[:8] if evals.is_dir() else hash_file(Path(config))
    base = f"skillassay-v1-{name}-"
    with_evals = f"{base}{evals_hash[:16]}-"
    exact = f"{with_evals}{hash_tree(skill)[:16]}-"
    suffix = f"{run_id}-{attempt}" + (f"-{shard.replace('/', 'of')}" if shard else "")
    return {"cache-key": exact + suffix, "restore-keys": "\n".join([exact, with_evals, base])}


def latest_iteration(workspace: Path) -> Path | None:
    from skillassay.store.layout import existing_iterations, iteration_dir

    numbers = existing_iterations(workspace)
    return iteration_dir(workspace, numbers[-1]) if numbers else None


def outputs(workspace: Path, reports: Path, code: int) -> dict[str, str]:
    out = {"exit-code": str(code), "verdict": {2: "BAD_INPUT", 130: "STOPPED", 143: "STOPPED"}.get(code, "")}
    try:
        gate = json.loads((reports / "gate.json").read_text(encoding="utf-8"))
        out["verdict"] = out["verdict"] or str(gate.get("status", ""))
    except (OSError, ValueError, AttributeError):
        pass
    it = latest_iteration(workspace)
    out["iteration"] = str(it or "")
    bench_path = it / "benchmark.json" if it else None
    if bench_path is None or not bench_path.is_file():
        return out | {"verdict": out["verdict"] or "NO_VERDICT"}
    from skillassay.report.pr_comment import total_cost

    bench = json.loads(bench_path.read_text(encoding="utf-8"))
    summary = bench.get("summary") or {}
    diff = ((bench.get("statistics") or {}).get("paired") or {}).get("pass_rate_difference") or {}
    out |= {"pass-rate-with-skill": _num((summary.get("with_skill") or {}).get("pass_rate")),
            "pass-rate-baseline": _num((summary.get("baseline") or {}).get("pass_rate")),
            "effect": _num(diff.get("mean")),
            "effect-interval": ",".join(_num(x) for x in diff.get("interval") or []),
            "cost": _num(total_cost(bench))}
    if (reports / "pr-comment.md").is_file():
        out["comment-file"] = str(reports / "pr-comment.md")
    return out


def _num(x: object) -> str:
    return f"{x:.6g}" if isinstance(x, int | float) and not isinstance(x, bool) else ""


def write_outputs(values: Mapping[str, str], path: str | None) -> None:
    """$GITHUB_OUTPUT lines; a value with a newline in the heredoc form, under a random delimiter."""
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        for key, value in values.items():
            if "\n" in value:
                delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
                fh.write(f"{key}<<{delimiter}\n{value}\n{delimiter}\n")
            else:
                fh.write(f"{key}={value}\n")


def post(env: Mapping[str, str]) -> str:
    from skillassay.cli.github_comments import Api, head_of, post_sticky

    pr_text, body_file = env.get("SA_PR_NUMBER", ""), env.get("SA_COMMENT_FILE", "")
    if not pr_text.isdigit():
        raise Refused(f"pull request number: expected a number, got {pr_text[:40]!r}")
    if not body_file or not Path(body_file).is_file():
        return "no comment file: nothing posted (the run wrote no iteration)"
    token = env.get("SA_TOKEN", "")
    if not token:
        raise Refused("no token to post with (input github-token)")
    api = Api(env.get("GITHUB_API_URL", "https://api.github.com"), env.get("GITHUB_REPOSITORY", ""), token)
    expected = env.get("SA_VERIFY_HEAD", "")
    if expected and head_of(api, int(pr_text)) != expected:  # an artifact naming another pull request
        raise Refused(f"pull request #{pr_text}'s head is not {expected[:12]}, the commit this comment was made "
                      "for: not posting (the artifact came from another pull request, or it moved on)")
    how, comment_id = post_sticky(api, int(pr_text), Path(body_file).read_text(encoding="utf-8"))
    return f"{how} comment {comment_id} on pull request #{pr_text}"


def main(argv: list[str]) -> int:
    from skillassay.cli.github_comments import GitHubError

    env = os.environ
    try:
        if argv[:1] == ["plan"]:
            write_outputs(plan(env), env.get("GITHUB_OUTPUT"))
        elif argv[:1] == ["outputs"] and len(argv) == 4:
            write_outputs(outputs(Path(argv[1]), Path(argv[2]), int(argv[3])), env.get("GITHUB_OUTPUT"))
        elif argv[:1] == ["post"]:
            print(post(env))
        else:
            print("usage: python -m skillassay.cli.github_action plan | outputs WORKSPACE REPORTS CODE | post",
                  file=sys.stderr)
            return 2
    except (Refused, GitHubError) as exc:
        print(f"::error::{exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
