"""`skillassay judge-check`: how often a judge gives the right verdict on the labelled cases
shipped with the package (grade/judge_check.py), with a 95% interval. Registered on the main
app by cli/main.py. It writes nothing unless asked (--output, --save)."""

# No `from __future__ import annotations`: cli/main.py says why.
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from skillassay.cli.console import JudgeModelOpt, count_bar, err, out
from skillassay.errors import EXIT_FAIL
from skillassay.wording import pct


def judge_check(
    judge: Annotated[str, typer.Option(help="The judge to measure: local (embedded model), openai or anthropic.")],
    judge_model: JudgeModelOpt = None,
    judge_samples: Annotated[int, typer.Option(min=1, help="Ask the judge K times per case; majority vote, ties ungraded (as in run).")] = 1,
    output: Annotated[Path | None, typer.Option(help="Also write the result (every case the judge got wrong included) as JSON here.")] = None,
    save: Annotated[bool, typer.Option("--save", help="Record the result where run and grade look for it, so they do not measure this judge again.")] = False,
    cases: Annotated[int | None, typer.Option(min=2, help="A quick look: only this many labelled cases, half with each right verdict. Never saved (run and grade need the judge measured on every case).")] = None,
) -> None:
    """Measure a judge: its agreement with labelled (answer, expectation, right verdict) cases,
    with a Wilson 95% interval. Exit 0 when the interval's lower bound reaches the floor that
    run and grade require (80%), 1 below it."""
    from skillassay.grade.grader import make_grader
    from skillassay.grade.judge_check import (
        FLOOR,
        TINY_NOTE,
        balanced_subset,
        check_judge,
        judge_label,
        load_cases,
        progress_lines,
        remember,
    )

    if save and cases is not None:
        from skillassay.errors import InputError

        raise InputError.one("--save", "", "a measurement on --cases is a quick look, not the judge's standing: "
                                          "drop --cases to save")

    grader = make_grader(judge, judge_model, judge_samples, use_cache=False)
    if grader.judge is None:
        from skillassay.errors import InputError

        raise InputError.one("--judge", judge, "choose a judge to measure: local, openai or anthropic")
    asked = balanced_subset(load_cases(), cases) if cases else load_cases()
    with count_bar(err, "cases judged") as bar:  # off a terminal: a line every few cases
        on_case = bar or progress_lines(lambda line: err.print(line, highlight=False), len(asked))
        agreement = check_judge(grader, asked, on_case=on_case)
    identity = grader.identity() or {}
    for d in agreement.disagreements:
        verdict = {True: "passed", False: "failed", None: "ungraded"}[d["judge"]]
        out.print(f"case {d['id']}: right verdict {'pass' if d['right'] else 'fail'}, the judge {verdict}: "
                  f"{escape(d['expectation'])} | answer: {escape(d['output'][:100])}", highlight=False,
                  soft_wrap=True)
    out.print(f"judge {judge_label(identity)} {agreement.sentence()}", highlight=False, soft_wrap=True)
    if identity.get("judge") == "local":
        out.print(f"note: {TINY_NOTE}", highlight=False, soft_wrap=True)
    meets = "meets" if agreement.meets_floor else "is below"
    out.print(f"floor: the lower bound {pct(agreement.low)} {meets} the {pct(FLOOR)} that run and grade require"
              + ("" if agreement.meets_floor else " (they refuse this judge unless given --allow-weak-judge)"),
              highlight=False, soft_wrap=True)
    if output is not None:
        from skillassay.store.jsonio import atomic_write_text

        if not output.parent.is_dir():
            from skillassay.errors import InputError

            raise InputError.one(output, "--output", "its folder does not exist")
        atomic_write_text(output, json.dumps(agreement.to_dict(), indent=2, ensure_ascii=False) + "\n")
        err.print(f"wrote {output}", highlight=False)
    if save:
        remember(grader, agreement)
    if not agreement.meets_floor:
        raise typer.Exit(EXIT_FAIL)


def register(app: typer.Typer) -> None:
    from skillassay.cli.console import handles_input_errors

    app.command("judge-check")(handles_input_errors(judge_check))
