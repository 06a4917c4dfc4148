"""What sandbox a trial runs in: the kind asked for (`--sandbox`, config `sandbox`) and, once
resolved, the kind used and why. Plain frozen data, so it rides in ExecutorSettings to every
thread and Ray node and is recorded in iteration.json as it was used."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from skillassay import plugins
from skillassay.errors import InputError

KINDS = ("auto", "none", "bwrap", "docker")  # the built-ins; plugins may add more (kinds.py)
DEFAULT_NETWORK = "host"  # the agent must reach the metering proxy on the host's 127.0.0.1


@dataclass(frozen=True)
class SandboxSpec:
    """kind: auto | none | bwrap | docker. The docker fields are ignored by the other kinds.
    `chosen` says how auto decided (or that the user asked); `digest` is the docker image's id."""

    kind: str = "auto"
    image: str | None = None
    cpus: float | None = None
    memory: str | None = None
    network: str | None = None
    mounts: tuple[str, ...] = ()  # docker: host folders shown read-only (an image that borrows /usr)
    chosen: str | None = None
    digest: str | None = None

    @property
    def isolated(self) -> bool:
        """True for a kind that confines the trial (the agent then gets no secrets): every
        sandbox plugin but `none` (auto is resolved before a trial runs)."""
        return self.kind not in ("auto", "none")

    def record(self) -> dict[str, Any]:
        """What iteration.json keeps: the kind used, how it was chosen, and docker's limits."""
        data = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items() if v not in (None, ())}
        if self.kind != "docker":
            for key in ("image", "cpus", "memory", "network", "digest", "mounts"):
                data.pop(key, None)
        elif self.network is None:
            data["network"] = DEFAULT_NETWORK
        return data

    def line(self) -> str:
        """One line for the report and the run's output."""
        text = self.kind
        if self.kind == "docker":
            limits = ", ".join(f"{k} {v}" for k, v in (("cpus", self.cpus), ("memory", self.memory),
                                                          ("network", self.network or DEFAULT_NETWORK)) if v)
            text += f" (image {self.image}{' ' + self.digest[:19] if self.digest else ''}; {limits})"
        return f"{text}; {self.chosen}" if self.chosen else text


def sandbox_spec(kind: str | None, config: dict[str, Any] | str | None, source: str = "sandbox",
                 key: str = "") -> SandboxSpec:
    """The spec from the config's `sandbox` (a kind, or an object with `kind` and docker's
    options) with the command line's --sandbox over it. Bad values: exit 2 naming where they came
    from: --sandbox, or `source` (the config file) and `key` (its JSON path)."""
    base: dict[str, Any] = config if isinstance(config, dict) else ({"kind": config} if config else {})
    fields: dict[str, Any] = {k: tuple(v) if k == "mounts" else v for k, v in base.items() if v is not None}
    spec = SandboxSpec(**fields)
    if kind:
        spec = replace(spec, kind=kind)
    where, field = ("--sandbox", "") if kind else (source, key)

    def refused(message: str) -> InputError:
        return InputError.one(where, field, f"{spec.kind}: {message}")

    if spec.kind != "auto" and plugins.find("sandboxes", spec.kind) is None:
        raise refused(f"unknown sandbox; one of auto, {', '.join(plugins.names('sandboxes'))}")
    if spec.kind == "docker" and not spec.image:
        raise refused("needs an image: `sandbox: {\"kind\": \"docker\", \"image\": \"NAME:TAG\"}` in the "
                      "config or --sandbox-image (docs/sandbox.md says how to build one)")
    if bad := [m for m in spec.mounts if not m.startswith("/") or ":" in m]:
        raise InputError.one(source, f"{key}.mounts" if key else "mounts",
                             f"{bad[0]!r}: host folders must be absolute paths without ':'")
    return spec
