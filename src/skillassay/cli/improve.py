"""Improve-mode commands: `history`, `compare-blind`, `analyze`. Registered on the main app by
cli/main.py; kept in their own module so the main command file stays small. Each command parses
options, calls one library function and renders the result."""

# No `from __future__ import annotations`: cli/main.py says why.
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from typer.core import TyperGroup

from skillassay.cli.console import JudgeModelOpt, err, handles_input_errors, latest_if_workspace, out
from skillassay.errors import EXIT_FAIL
from skillassay.wording import pct, signed_points


class _DefaultToShow(TyperGroup):
    """`skillassay history WORKSPACE` shows; `skillassay history record DIR` records. A group
    cannot take a positional argument before its sub-command, so a first argument that is not
    a sub-command name is routed to `show`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["show", *args]
        return super().parse_args(ctx, args)


history_app = typer.Typer(cls=_DefaultToShow, no_args_is_help=True, add_completion=False,
                          help="The version progression of an improved skill (WORKSPACE/history.json).\n\n"
                               "`skillassay history WORKSPACE` is short for `skillassay history show WORKSPACE`.")


def render_history(history: Any) -> Any:
    """A rich table of the progression, and which version is the best and why. Narrow enough for
    an 80-column terminal or CI log (a cut header read "pass rate" of the per-expectation rate),
    folding rather than cutting a cell; the difference in points, as every other view says it."""
    from rich.table import Column, Table

    def column(header: str, min_width: int = 0) -> Column:
        return Column(header, overflow="fold", min_width=min_width)

    table = Table(column("version"), column("iter"), column("parent"), column("expectation pass rate", 11),
                  column("result"), column("vs"), column("difference (95% CI), p", 12),
                  title=f"{history.skill_name}: started {history.started_at}", caption="* the current best")
    for entry in history.iterations:
        extra = entry.model_extra or {}
        c = _comparison(entry)
        iv, p = c.get("interval"), c.get("p_value")
        diff = "" if not c else (f"{signed_points(c['mean_difference'])} pts" if c.get("mean_difference") is not None else "n/a")
        if iv:
            diff += f"\n({signed_points(iv[0])} to {signed_points(iv[1])})"
        if p is not None:
            diff += f"\np = {p:.3g}"
        table.add_row(entry.version + (" *" if entry.is_current_best else ""), str(extra.get("iteration", "")),
                      entry.parent or "-", f"{pct(entry.expectation_pass_rate)}", entry.grading_result,
                      c.get("against", "-"), diff)
    return table


def _comparison(entry: Any) -> dict[str, Any]:
    """An entry's `comparison` (an extra field history.json may hold as anything): {} unless an object."""
    found = (entry.model_extra or {}).get("comparison")
    return found if isinstance(found, dict) else {}


def best_reason(history: Any) -> str:
    best = next((e for e in history.iterations if e.version == history.current_best), None)
    if best is None:  # a history with no versions (the model accepts one)
        return "current best: none yet (no versions recorded)"
    later = [e for e in history.iterations if _comparison(e).get("against") == best.version]
    counts = ", ".join(f"{sum(e.grading_result == r for e in later)} {r}" for r in ("tie", "lost")
                       if any(e.grading_result == r for e in later))
    why = _comparison(best).get("reason") if best.parent else "the baseline"
    tail = f"; since then no version beat it ({counts})" if counts else ""
    return f"current best: {best.version} ({(best.model_extra or {}).get('iteration_dir', '')}): {why}{tail}"


@history_app.command("show")
def history_show(workspace: Annotated[Path, typer.Argument(metavar="WORKSPACE", help="A workspace folder (holding iteration-N/); an iteration folder: its workspace.")]) -> None:
    """Show the progression and which version is the current best, and why."""
    from skillassay.errors import InputError
    from skillassay.improve.history import HISTORY_FILE, load_history

    if (workspace / "iteration.json").is_file():  # an iteration: the history is its workspace's
        workspace = workspace.resolve().parent

    history = load_history(workspace)
    if history is None:
        raise InputError.one(workspace / HISTORY_FILE, "", "no history yet: run `skillassay run` or `skillassay history record ITERATION_DIR`")
    out.print(render_history(history))
    out.print(best_reason(history), highlight=False)


@history_app.command("record")
def history_record(
    iteration_dir: Annotated[Path, typer.Argument(metavar="ITERATION_DIR", help="An iteration folder, e.g. WORKSPACE/iteration-3 (a workspace: its latest iteration).")],
    seed: Annotated[int, typer.Option(help="Seed for Monte-Carlo p-values (more than 14 differing evals).")] = 0,
) -> None:
    """Add (or replace) an iteration in its workspace's history.json."""
    from skillassay.improve.history import HISTORY_FILE, record_iteration

    if iteration_dir.is_dir():
        iteration_dir = latest_if_workspace(iteration_dir, "recording")
    workspace = iteration_dir.resolve().parent
    history = record_iteration(workspace, iteration_dir.resolve(), seed=seed)
    err.print(f"wrote {workspace / HISTORY_FILE}", highlight=False)
    out.print(render_history(history))
    out.print(best_reason(history), highlight=False)


# The default, local, is in the help text (show_default off) so it reads like run's and grade's --judge.
JudgeOpt = Annotated[str, typer.Option(show_default=False, help="Judge: local (embedded model), openai or anthropic (default: local).")]


def compare_blind(
    iter_a: Annotated[Path, typer.Argument(metavar="ITER_A", help="The first iteration folder (label A).")],
    iter_b: Annotated[Path, typer.Argument(metavar="ITER_B", help="The second iteration folder (label B); results are written in it.")],
    eval_id: Annotated[str | None, typer.Option("--eval", help="Only this eval id.")] = None,
    judge: JudgeOpt = "local",
    judge_model: JudgeModelOpt = None,
    seed: Annotated[int, typer.Option(help="Seed of the order in which the outputs are shown.")] = 0,
    all_runs: Annotated[bool, typer.Option("--all-runs", help="Compare every matching run, not only run 1.")] = False,
) -> None:
    """Blind A/B comparison of two iterations' with-skill outputs, judged in both orders.

    Writes ITER_B/blind/vs-<ITER_A>/eval-<id>/comparison-N.json and summary.json; exits 1
    when the judge failed on any pair (no verdict is invented for it)."""
    from skillassay.improve.blind import compare_blind as run_compare
    from skillassay.improve.blind import make_compare_judge

    result = run_compare(iter_a, iter_b, make_compare_judge(judge, judge_model), eval_id, seed, all_runs)
    for o in result.outcomes:
        label = f"eval {o.pair.eval_id} run-{o.pair.run_number}"
        if o.comparison is None:
            err.print(f"[red]judge failed[/red] {escape(str(label))}: {escape(str(o.error))}", markup=True, highlight=False)
        else:
            consistent = (o.comparison.model_extra or {}).get("blind", {}).get("position_consistent")
            out.print(f"{label}: winner {o.comparison.winner}"
                      f"{'' if consistent else ' (verdict flipped with the order)'} -> {o.path}", highlight=False)
    s = result.summary
    iv = s["win_rate_b_interval"]
    rate = "n/a" if s["win_rate_b"] is None else f"{pct(s['win_rate_b'])}"
    ci = f" (95% CI {pct(iv[0])}..{pct(iv[1])})" if iv else ""
    out.print(f"B wins {s['b_wins']}, A wins {s['a_wins']}, ties {s['ties']} of {s['n_evals']} evals: "
              f"win rate of B {rate}{ci} -> {result.summary_path}", highlight=False)
    if s["failures"]:
        raise typer.Exit(EXIT_FAIL)


def analyze(
    comparisons: Annotated[list[Path], typer.Argument(metavar="COMPARISONS", help="comparison-N.json files written by compare-blind.")],
    judge: JudgeOpt = "local",
    judge_model: JudgeModelOpt = None,
) -> None:
    """Explain why the winner won: strengths, weaknesses, instruction following, suggestions.

    Writes analysis.json beside each comparison; exits 1 when the judge failed on any."""
    from skillassay.grade.judge import JudgeError
    from skillassay.improve.analysis import analyze_file
    from skillassay.improve.blind import make_compare_judge

    backend = make_compare_judge(judge, judge_model)
    failed = False
    for path in comparisons:
        try:
            out.print(f"wrote {analyze_file(path, backend)}", highlight=False)
        except JudgeError as exc:
            failed = True
            err.print(f"[red]judge failed[/red] {escape(str(path))}: {escape(str(exc))}", markup=True, highlight=False)
    if failed:
        raise typer.Exit(EXIT_FAIL)


def register(app: typer.Typer) -> None:
    """Add the commands to the main app, each turning InputError into exit 2 with a message."""
    guard = handles_input_errors
    for command in history_app.registered_commands:
        command.callback = guard(command.callback) if command.callback else None
    app.add_typer(history_app, name="history")
    app.command("compare-blind")(guard(compare_blind))
    app.command("analyze")(guard(analyze))
