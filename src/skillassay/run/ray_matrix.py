"""A matrix run on Ray (issue 37): ONE Ray backend for every agent. A node's actor holds all the
node's slots, so one actor per node per agent would wait on each other; here each node's one
actor runs any agent's trials, the agent's executor built there once per (name, settings), as
a one-agent actor builds its own (backends.worker_executor). Preflight asks every agent's
executor on every node."""

from __future__ import annotations

import os
from typing import Any

from skillassay.executors import Executor, ExecutorSettings
from skillassay.run.backends import (
    Member,
    RayBackend,
    Returned,
    TrialActor,
    key_env,
    worker_ready,
    worker_trial,
)
from skillassay.run.execute import RetryPolicy
from skillassay.run.plan import Trial


class MatrixTrialActor(TrialActor):
    """A node's actor for every agent: `agent_trial` names the executor per trial."""

    def __init__(self, agents: list[tuple[str, ExecutorSettings]], keys: dict[str, str]) -> None:
        os.environ.update(keys)
        self.agents = agents

    def ready(self) -> tuple[str, str | None]:
        label, problems = "", []
        for name, settings in self.agents:
            label, missing = worker_ready(name, settings)
            if missing:
                problems.append(f"{name}: {missing}")
        return label, "; ".join(problems) or None

    def agent_trial(self, name: str, settings: ExecutorSettings, trial: Trial, skill: Any, inputs: Any,
                    policy: RetryPolicy, limit: int) -> Returned:
        return worker_trial(name, settings, trial, skill, inputs, policy, limit)


class MatrixRayBackend(RayBackend):
    """RayBackend whose pool serves several executors (the agents')."""

    def __init__(self, address: str | None, executors: list[Executor]) -> None:
        super().__init__(address)
        self.executors = executors
        self.actor_class = self.ray.remote(concurrency_groups={"control": 1})(MatrixTrialActor)

    def start_actor(self, node: dict[str, Any], executor: Executor) -> Member:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from skillassay.run.backends import SLOT_RESOURCE

        amount = node["Resources"][self.resource]
        wants: dict[str, Any] = ({"num_cpus": 0, "resources": {SLOT_RESOURCE: amount}}
                                 if self.resource == SLOT_RESOURCE else {"num_cpus": amount})
        handle = self.actor_class.options(
            **wants, max_concurrency=int(amount), max_restarts=0, max_task_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False),
        ).remote([(e.name, e.settings) for e in self.executors], key_env())
        return Member(handle, node, int(amount))

    def send(self, member: Member, trial: Trial, executor: Executor, skill_arg: Any, inputs: Any,
             policy: RetryPolicy) -> Any:
        """As RayBackend.send, the trial sent with its agent's executor name and settings."""
        return member.handle.agent_trial.remote(executor.name, executor.settings, trial, skill_arg, inputs, policy,
                                                self.max_output_bytes)


def open_matrix_ray(address: str | None, executors: list[Executor]) -> MatrixRayBackend:
    """Connected, and checked on every node for every agent (exit 2 naming what cannot run where)."""
    backend = MatrixRayBackend(address, executors)
    try:
        backend.preflight(executors[0])
    except BaseException:
        backend.close()
        raise
    return backend
