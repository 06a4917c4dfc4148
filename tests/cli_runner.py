"""The one way tests call the CLI in-process: typer's CliRunner on skillassay's app.

`code, output = invoke(...)` for the common case; the result also carries `.exception` (a
crash, as opposed to the SystemExit of an exit code) and `.flat` (the output with its line
wrapping undone, for messages rich folds at the terminal width)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner


@dataclass(frozen=True)
class Invocation:
    exit_code: int
    output: str  # stdout and stderr as the user sees them, interleaved
    stdout: str
    stderr: str
    exception: BaseException | None

    @property
    def code(self) -> int:
        return self.exit_code

    @property
    def flat(self) -> str:
        return " ".join(self.output.split())

    @property
    def crashed(self) -> bool:
        """An exception other than the SystemExit that carries an exit code."""
        return self.exception is not None and not isinstance(self.exception, SystemExit)

    def __iter__(self) -> Iterator[object]:
        return iter((self.exit_code, self.output))

    def __getitem__(self, index: int) -> object:
        return (self.exit_code, self.output)[index]


def cli(args: Sequence[str | Path], env: dict[str, str] | None = None, input: str | None = None) -> Invocation:
    """Run `skillassay ARGS...` in this process, as a user would from a shell."""
    from skillassay.cli.main import app  # imported here: collecting a test must not import the whole CLI

    result = CliRunner().invoke(app, [str(a) for a in args], env=env, input=input)
    return Invocation(result.exit_code, result.output, result.stdout, result.stderr, result.exception)


def invoke(*args: str | Path, env: dict[str, str] | None = None) -> Invocation:
    """`cli` with the arguments spread: `code, output = invoke("gate", path)`."""
    return cli(args, env=env)
