"""What the sandbox tests share: a hostile agent's shell script that tries every escape issue 33
names, and how to read, from the host, which of them worked; and a stand-in provider for the
metering proxy's tests (Upstream)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from loopback_server import LoopbackServer

from skillassay.sandbox import bwrap

KEY_VAR = "ANTHROPIC_API_KEY"
KEY = "sk-ant-sandbox-test-key-0123456789"

needs_bwrap = pytest.mark.skipif(bwrap.works() is not None, reason=f"bwrap cannot run here: {bwrap.works()}")


@dataclass
class Upstream(LoopbackServer):
    """A loopback stand-in for the provider behind the metering proxy: records every request that
    reached it (path, lower-cased headers, body) and answers each with `answer` as `content_type`."""

    answer: bytes
    content_type: str = "application/json"
    seen: list[dict[str, Any]] = field(default_factory=list)

    def respond(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], bytes]:
        self.seen.append({"path": path, "headers": headers, "body": raw})
        return 200, {"Content-Type": self.content_type}, self.answer

    def url(self, prefix: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{prefix}"


@dataclass
class Targets:
    """The host paths a hostile trial goes for; all outside its work folder."""

    home_secret: Path  # a file in the user's home, holding SECRET
    home_drop: Path  # a file the trial tries to create in the user's home
    outside: Path  # a file the trial tries to create next to its work folder
    skill_md: Path  # the source SKILL.md of the skill under test

    SECRET = "user-home-secret-7f3a"

    def script(self) -> str:
        """Bash run inside the trial (cwd: its work folder); it records what it managed."""
        return (f"cat {self.home_secret} > read_home.txt 2>/dev/null; "
                f"echo pwned > {self.home_drop} 2>/dev/null; "
                f"echo pwned > {self.outside} 2>/dev/null; "
                f"echo 'INJECTED' >> {self.skill_md} 2>/dev/null; "
                f"printf %s \"${{{KEY_VAR}:-}}\" > key.txt; env > env.txt; echo probed")

    def escapes(self, work: Path) -> dict[str, bool]:
        """Which escapes worked, seen from the host after the trial."""
        env_text = (work / "env.txt").read_text() if (work / "env.txt").exists() else ""
        return {
            "read_home": (work / "read_home.txt").exists() and self.SECRET in (work / "read_home.txt").read_text(),
            "write_home": self.home_drop.exists(),
            "write_outside": self.outside.exists(),
            "change_skill": "INJECTED" in self.skill_md.read_text(),
            "read_key": (work / "key.txt").exists() and KEY in (work / "key.txt").read_text() or KEY in env_text,
        }


@contextlib.contextmanager
def targets(tmp_path: Path, skill_md: Path) -> Iterator[Targets]:
    """The targets, with the home files removed afterwards whatever happened."""
    tag = uuid.uuid4().hex[:12]
    home = Path.home()
    found = Targets(home / f".skillassay-sandbox-secret-{tag}", home / f".skillassay-sandbox-drop-{tag}",
                    tmp_path / "outside.txt", skill_md)
    found.home_secret.write_text(Targets.SECRET)
    try:
        yield found
    finally:
        for path in (found.home_secret, found.home_drop):
            path.unlink(missing_ok=True)


ALL_ESCAPED = {"read_home": True, "write_home": True, "write_outside": True, "change_skill": True, "read_key": True}
NONE_ESCAPED = {key: False for key in ALL_ESCAPED}
