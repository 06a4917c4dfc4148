"""Per-trial sandboxes (none, bwrap, docker; auto picks) and what keeps secrets out of them.
Below the executors, which wrap every program they start with `confined()`."""

from skillassay.sandbox.confine import WARNING, Resolved, confined, named_paths, resolve, resolved
from skillassay.sandbox.proxy import PLACEHOLDER_KEY, MeteringProxy
from skillassay.sandbox.secrets import scrubbed
from skillassay.sandbox.spec import KINDS, SandboxSpec, sandbox_spec

__all__ = ["KINDS", "PLACEHOLDER_KEY", "MeteringProxy", "scrubbed", "WARNING", "Resolved", "SandboxSpec", "confined", "named_paths", "resolve", "resolved",
           "sandbox_spec"]
