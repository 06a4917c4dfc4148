"""`run --dry-run` (issue 36): the plan and what it will cost, before any money is spent.

Nothing runs and nothing is written: the inputs are checked as `run` checks them, the iteration
`run` would use is picked by the same fingerprint (its sandbox taken as configured, unprobed),
and the trials already graded there are counted as reused. The cost range is per arm:
from earlier iterations' per-trial costs of the same executor and model where they exist (the
cheapest and the dearest trial, times the trials to run), else from the prompt's size (the
least a trial costs: its prompt read once, nothing written) and the token ceiling x the prices
(the most), saying which."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from skillassay.executors import ExecutorSettings, load_executor_class
from skillassay.executors.pricing import FREE_EXECUTORS, price_for, price_table, priced_usd, worst_case_usd
from skillassay.grade.grader import make_grader
from skillassay.models import Eval
from skillassay.run.engine import RunRequest, adaptive_settings, eval_name, judge_identity
from skillassay.run.plan import choose_iteration, hash_file, hash_tree, hash_value, plan_trials
from skillassay.run.preflight import check_inputs
from skillassay.store.jsonio import load_json_lenient
from skillassay.store.layout import default_workspace, existing_iterations, iteration_dir
from skillassay.store.read import read_trial

CHARS_PER_TOKEN = 4  # a prompt's tokens, roughly; the low end rounds it down to stay a low end


@dataclass
class ArmPlan:
    configuration: str
    trials: int  # planned
    reused: int  # already graded in the iteration `run` would resume
    low_usd: float | None = None
    high_usd: float | None = None

    @property
    def to_run(self) -> int:
        return self.trials - self.reused


@dataclass
class DryRun:
    iteration: int
    reason: str
    executor: str
    model: str | None
    evals: int
    trials_per_eval: int
    arms: list[ArmPlan]
    basis: str  # where the cost range comes from
    notes: list[str] = field(default_factory=list)

    @property
    def low_usd(self) -> float | None:
        return None if any(a.low_usd is None for a in self.arms) else sum(a.low_usd or 0.0 for a in self.arms)

    @property
    def high_usd(self) -> float | None:
        return None if any(a.high_usd is None for a in self.arms) else sum(a.high_usd or 0.0 for a in self.arms)


def dry_run(req: RunRequest) -> DryRun:
    inputs = check_inputs(req.skill_dir, req.evals_path, req.config_path, judge=req.judge)
    assert inputs is not None
    skill, config, evals = inputs.skill, inputs.config, inputs.evals
    name = req.executor or config.executor or "local"
    settings = ExecutorSettings(
        skill_under_test=skill.name, model=req.model or config.model,
        temperature=req.temperature if req.temperature is not None else config.temperature,
        max_tokens=req.max_tokens or config.max_tokens,
        timeout_seconds=req.timeout_seconds or config.timeout_seconds or 300.0,
        options=dict(req.executor_options), prices=price_table(config.model_dump()["prices"]))
    executor = load_executor_class(name)(settings)
    grader = make_grader(req.judge, req.judge_model, req.judge_samples)
    files = inputs.input_files
    files_hash = hash_value({k: [str(f) + hash_file(f)[:16] for f in v] for k, v in files.items()})
    seed = req.seed if req.seed is not None else (config.seed or 0)
    fingerprint = {  # as engine.prepare makes it
        "skill": hash_tree(skill.path),
        "evals": hash_value(evals.model_dump(mode="json")) + ":" + files_hash[:16],
        "settings": hash_value({**executor.identity(), "seed": seed, "baseline_type": config.baseline_type,
                                **judge_identity(grader, req.judge_samples)}),
    }
    workspace = req.workspace or default_workspace(req.skill_dir, skill.name)
    choice = choose_iteration(workspace, fingerprint, req.iteration)
    it_dir = iteration_dir(workspace, choice.number)
    adaptive = adaptive_settings(req, config)
    trials = adaptive.max_trials_per_eval if adaptive else req.trials or config.trials_per_eval
    base = "without_skill" if config.baseline_type == "no_skill" else "old_skill"
    arms = [ArmPlan(cfg, trials * len(evals.evals), 0) for cfg in ("with_skill", base)]
    if choice.resumed:
        for t in plan_trials(evals.evals, [a.configuration for a in arms], trials, it_dir, seed):
            rec, _ = read_trial(str(t.run_dir), t.eval.id, eval_name(t.eval), t.configuration, t.run_number)
            if rec is not None and rec.status == "ok":
                next(a for a in arms if a.configuration == t.configuration).reused += 1
    executor.close()
    basis = _price(arms, name, settings, workspace, evals.evals)
    notes = [f"adaptive: at most {trials} trials per eval and arm; it may stop sooner"] if adaptive else []
    return DryRun(choice.number, choice.reason, name, settings.model, len(evals.evals), trials, arms, basis, notes)


def earlier_costs(workspace: Path, executor: str, model: str | None) -> dict[str, list[float]]:
    """configuration -> the per-trial costs of graded trials of earlier iterations run with
    this executor and model (read from their metrics.json)."""
    out: dict[str, list[float]] = {}
    for n in existing_iterations(workspace):
        it = iteration_dir(workspace, n)
        for metrics in it.glob("*/*/run-*/outputs/metrics.json"):
            if not (metrics.parent.parent / "grading.json").is_file():
                continue
            m = load_json_lenient(metrics)
            usage = m.get("usage") if isinstance(m, dict) else None
            cost = usage.get("cost_usd") if isinstance(usage, dict) else None
            if (m.get("executor") == executor and m.get("model") == model and isinstance(cost, int | float)
                    and not isinstance(cost, bool)):
                out.setdefault(metrics.parent.parent.parent.name, []).append(float(cost))
    return out


def _price(arms: list[ArmPlan], executor: str, settings: ExecutorSettings, workspace: Path,
           evals: list[Eval]) -> str:
    if executor in FREE_EXECUTORS:
        for a in arms:
            a.low_usd = a.high_usd = 0.0
        return f"the {executor} executor costs nothing"
    seen = earlier_costs(workspace, executor, settings.model)
    if all(seen.get(a.configuration) for a in arms):
        for a in arms:
            costs = seen[a.configuration]
            a.low_usd, a.high_usd = a.to_run * min(costs), a.to_run * max(costs)
        n = sum(len(seen[a.configuration]) for a in arms)
        return (f"earlier iterations' per-trial costs ({n} trials of {executor}"
                f"{' / ' + settings.model if settings.model else ''}): cheapest and dearest trial x trials to run")
    price = price_for(settings.model, settings.prices or {})
    if price is None:
        return (f"no estimate: no earlier trial of {executor}"
                f"{' / ' + settings.model if settings.model else ''} has a cost and the model has no price "
                "(add it to the config's `prices`)")
    ceiling = settings.options.get("token_budget")
    high = worst_case_usd(price, int(ceiling) if isinstance(ceiling, int | float) else None)
    prompt_tokens = sum(len(e.prompt) for e in evals) // CHARS_PER_TOKEN / max(len(evals), 1)
    for a in arms:
        a.low_usd = priced_usd(price, int(prompt_tokens * a.to_run), 0)
        a.high_usd = None if high is None else a.to_run * high
    return ("the prompts' size x the input price (low) and the token ceiling (token_budget) x the dearest price "
            "(high)" + ("" if high is not None else "; no token ceiling, so no upper bound"))


__all__ = ["ArmPlan", "DryRun", "dry_run", "earlier_costs"]
