"""A workspace written by an earlier release must read exactly as it did then: same
benchmark.json from `aggregate`, same gate, same report (timestamps and paths aside)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from typer.testing import CliRunner

from skillassay.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "fixtures" / "golden_ws"
EXAMPLE = str(ROOT / "examples" / "acme-vpn")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "acme-vpn-workspace"
    shutil.copytree(FIXTURE / "workspace", ws)
    for p in ws.rglob("*"):
        if p.is_file() and p.suffix in {".json", ".md"}:
            text = p.read_text(encoding="utf-8")
            if "@EXAMPLE@" in text:
                p.write_text(text.replace("@EXAMPLE@", EXAMPLE), encoding="utf-8")
    return ws / "iteration-1"


def _expected(name: str) -> str:
    return (FIXTURE / "expected" / name).read_text(encoding="utf-8").replace("@EXAMPLE@", EXAMPLE)


def _plain(text: str) -> str:
    return TIMESTAMP.sub("<time>", text)


def test_aggregate_of_an_old_workspace_is_unchanged(tmp_path: Path) -> None:
    it = _workspace(tmp_path)
    result = CliRunner().invoke(app, ["aggregate", str(it)])
    assert result.exit_code == 0, result.output
    assert _plain((it / "benchmark.json").read_text(encoding="utf-8")) == _plain(_expected("aggregate-benchmark.json"))
    assert _plain((it / "benchmark.md").read_text(encoding="utf-8")) == _plain(_expected("aggregate-benchmark.md"))


def test_gate_and_report_of_an_old_workspace_are_unchanged(tmp_path: Path) -> None:
    it = _workspace(tmp_path)
    gate = CliRunner().invoke(app, ["gate", str(it), "--json"])
    assert gate.exit_code == 3, gate.output
    assert json.loads(gate.stdout) == json.loads(_expected("gate.json"))
    report = CliRunner().invoke(app, ["report", str(it)])
    assert report.exit_code == 0, report.output
    assert _plain((it / "report.md").read_text(encoding="utf-8")) == _plain(_expected("report.md"))
