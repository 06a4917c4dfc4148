"""Put a real `judge-check` result into the package (src/skillassay/grade/judge_standing.json),
so `run --judge NAME` refuses or accepts that judge at once instead of measuring it first.

    skillassay judge-check --judge local --output result.json   # the real measurement (~20 min)
    python scripts/ship_judge_standing.py result.json

The result must be of the judge as this checkout builds it (same identity: prompt templates,
sampling, caps, samples) on every labelled case of this checkout; the record is keyed by that
identity, the cases' hash and the installed model file's sha256 (grade/judge_standing.py), so a
later change to any of them makes `run` measure again rather than trust this record. Run it
again whenever the judge's prompts, the model or the cases change."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from skillassay.executors.llama_runtime import available_cpus, build_info
from skillassay.grade.grader import make_grader
from skillassay.grade.judge_check import Agreement, cases_sha256, current_key, load_cases
from skillassay.grade.judge_standing import SHIPPED_FILE, shipped_data, with_record

TARGET = Path(__file__).resolve().parent.parent / "src" / "skillassay" / "grade" / SHIPPED_FILE


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    result = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    agreement = Agreement.from_dict(result)
    identity = agreement.judge
    grader = make_grader(str(identity.get("judge")), identity.get("model") if identity.get("judge") != "local" else None,
                         int(identity.get("samples", 1)), use_cache=False)
    key = current_key(grader)
    problems = [what for what, bad in (
        ("the judge's identity differs from this checkout's (prompt templates, sampling or caps changed)",
         key["judge"] != identity),
        ("it was measured on another case set", agreement.cases_sha256 != cases_sha256()),
        ("it was not measured on every case (--cases)", agreement.cases != len(load_cases())),
    ) if bad]
    if problems:
        print(f"{argv[0]}: not shipped: " + "; ".join(problems), file=sys.stderr)
        return 2
    measured_with = {**build_info(), "n_threads": available_cpus()} if identity.get("judge") == "local" else {}
    kept = {k: v for k, v in agreement.to_dict().items() if k != "disagreements"}  # judge-check lists those
    data = with_record(shipped_data(), key, kept, measured_with)
    TARGET.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {TARGET}: {agreement.sentence()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
