"""Real `run`s of a skill on the echo executor (it answers with the skill's text, so removing a
fact from SKILL.md makes the evals that need it fail): shared by the comparison, report and
interval tests."""

from __future__ import annotations

from pathlib import Path

from cli_runner import invoke as run_cli


def run_echo(skill: Path, ws: Path, *extra: str) -> tuple[int, str]:
    return run_cli("run", str(skill), "--executor", "echo", "--workspace", str(ws), *extra)


def drop_facts(skill: Path, *needles: str) -> None:
    """Remove every line of SKILL.md holding one of `needles`."""
    md = skill / "SKILL.md"
    md.write_text("\n".join(line for line in md.read_text().splitlines()
                            if not any(n in line for n in needles)) + "\n")
