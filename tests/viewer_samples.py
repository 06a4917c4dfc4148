"""The sample workspaces the viewer tests share (conftest.py's session fixtures `workspace` and
`evil_workspace` build them once per session), the injection payloads, and the CLI helper the
viewer tests call."""

from __future__ import annotations

import json
import shutil
import struct
import zlib
from pathlib import Path

from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.viewer.build import build_index

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "acme-vpn"
SENTINEL = "__pwned"
PAYLOADS = [
    f"</script><script>window.{SENTINEL}=1</script>",
    f'<img src=x onerror="window.{SENTINEL}=1;alert(1)">',
    f"[click me](javascript:window.{SENTINEL}=1)",
    f"<svg/onload=window.{SENTINEL}=1>",
    f"<!--</script><script>window.{SENTINEL}=1;confirm(1)</script>-->",
    f"\u2028\u2029</SCRIPT ><script>window.{SENTINEL}=1</script>",
    f"<a href=\"javascript:window.{SENTINEL}=1\">x</a><iframe srcdoc=\"<script>parent.{SENTINEL}=1</script>\">",
]
EVIL = "\n".join(PAYLOADS)
# File names cannot hold "/", so the name payloads avoid it.
EVIL_NAMES = [f"<img src=x onerror=window.{SENTINEL}=1>.txt", f"<svg onload=window.{SENTINEL}=1>.md",
              f"javascript:window.{SENTINEL}=1.bin"]


def tiny_png(width: int = 4, height: int = 3) -> bytes:
    """A valid RGB PNG built by hand, so tests need no imaging library."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def run_cli(*args: str) -> int:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code


def echo_run(skill: Path, workspace: Path, *extra: str) -> Path:
    code = run_cli("run", str(skill), "--executor", "echo", "--workspace", str(workspace), "--trials", "1",
                   "-o", "write_file=notes.md", *extra)
    assert code in (0, 1, 3)
    return max(workspace.glob("iteration-*"), key=lambda p: int(p.name.split("-")[1]))


def add_output_kinds(run_dir: Path) -> None:
    """One file of each kind the viewer renders, into a run's outputs/."""
    out = run_dir / "outputs"
    (out / "script.py").write_text("def greet(name):\n    return f'hello {name}'\n")
    (out / "report.md").write_text("# Report\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n**bold** text\n")
    (out / "chart.png").write_bytes(tiny_png())
    (out / "data.bin").write_bytes(b"\x00\x01\x02binary\xff\xfe")
    (out / "log.txt").write_text("plain log line\n")


def build_workspace(root: Path) -> dict[str, Path]:
    """Two iterations of the example skill (the skill changed in between), extra output kinds
    in the first run of iteration 2, and feedback left on iteration 1."""
    skill = root / "acme-vpn"
    shutil.copytree(EXAMPLE, skill, ignore=shutil.ignore_patterns("*-workspace"))
    ws = root / "ws"
    it1 = echo_run(skill, ws)
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nThe Acme VPN supports IPv6.\n")
    it2 = echo_run(skill, ws)
    assert it1 != it2
    first = build_index(it2).runs[0]
    add_output_kinds(it2 / first.run_id)
    prev_first = build_index(it1).runs[0]
    (it1 / "feedback.json").write_text(json.dumps({"reviews": [
        {"run_id": prev_first.run_id, "feedback": "previous feedback: too long", "timestamp": "2026-01-01T00:00:00Z"}],
        "status": "complete"}))
    return {"skill": skill, "ws": ws, "it1": it1, "it2": it2, "first": it2 / first.run_id}


def evil_skill(root: Path) -> Path:
    """A skill whose description, eval names, prompts and expectations carry the payloads."""
    skill = root / "evil"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: evil\ndescription: {json.dumps('Evil skill ' + PAYLOADS[0])}\n---\n{EVIL}\n")
    evals = [{"id": i + 1, "name": p, "prompt": f"Answer this: {p}", "expected_output": p,
              "expectations": [{"type": "contains", "value": p}, {"type": "contains", "value": f"missing {p}"}]}
             for i, p in enumerate(PAYLOADS[:3])]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "evil", "evals": evals}))
    (skill / "evals" / "benchmark_config.json").write_text(json.dumps({"trials_per_eval": 1, "thresholds": {"min_pass_rate": 0.5}}))
    return skill


def build_evil_workspace(root: Path) -> dict[str, Path]:
    """Two iterations of the evil skill: payloads in the notes, in output file names and contents
    of every run of iteration 2, and in the feedback left on iteration 1."""
    skill = evil_skill(root)
    ws = root / "ws"
    it1 = echo_run(skill, ws)
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nchanged\n")
    it2 = echo_run(skill, ws)
    bench = json.loads((it2 / "benchmark.json").read_text())
    bench["notes"] = PAYLOADS
    (it2 / "benchmark.json").write_text(json.dumps(bench))
    for ref in build_index(it2).runs:
        out = it2 / ref.run_id / "outputs"
        for name in EVIL_NAMES:
            (out / name).write_text(EVIL)
        (out / "evil.html").write_text(EVIL)
        (out / "evil.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg" onload="window.{SENTINEL}=1"><script>window.{SENTINEL}=1</script></svg>')
        (out / "evil.md").write_text(EVIL + f"\n\n![x](javascript:window.{SENTINEL}=1)\n")
    first = build_index(it1).runs[0]
    (it1 / "feedback.json").write_text(json.dumps({"reviews": [
        {"run_id": first.run_id, "feedback": EVIL, "timestamp": "2026-01-01T00:00:00Z"}], "status": "in_progress"}))
    return {"it1": it1, "it2": it2}
