"""`run --dry-run`'s printout: the plan and its cost range (run/estimate.py), nothing run or written."""

from __future__ import annotations

from rich.console import Console

from skillassay.analyze.cost import usd
from skillassay.errors import EXIT_PASS
from skillassay.run.engine import RunRequest
from skillassay.run.estimate import dry_run


def print_dry_run(req: RunRequest, console: Console) -> int:
    plan = dry_run(req)
    say = console.print
    say(f"dry run: iteration {plan.iteration} ({plan.reason}); executor {plan.executor}"
        f"{' / ' + plan.model if plan.model else ''}; nothing is run or written", highlight=False, soft_wrap=True)
    say(f"plan: {plan.evals} evals x {plan.trials_per_eval} trials per eval and arm", highlight=False)
    for a in plan.arms:
        cost = "" if a.low_usd is None else (
            f", {usd(a.low_usd)}..{usd(a.high_usd)}" if a.high_usd is not None else f", at least {usd(a.low_usd)}")
        say(f"  {a.configuration}: {a.trials} trials, {a.reused} reused, {a.to_run} to run{cost}", highlight=False)
    total = sum(a.trials for a in plan.arms)
    reused = sum(a.reused for a in plan.arms)
    say(f"total: {total} trials, {reused} reused, {total - reused} to run", highlight=False)
    if plan.low_usd is None:
        say(f"cost: {plan.basis}", highlight=False, soft_wrap=True)
    else:
        span = f"{usd(plan.low_usd)}..{usd(plan.high_usd)}" if plan.high_usd is not None \
            else f"at least {usd(plan.low_usd)} (no upper bound)"
        say(f"cost: {span}, from {plan.basis}", highlight=False, soft_wrap=True)
    for note in plan.notes:
        say(f"note: {note}", highlight=False, soft_wrap=True)
    return EXIT_PASS
