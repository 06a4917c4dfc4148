"""A deterministic stand-in agent for the `command` executor in trigger tests: it "loads" a
skill when a word of 4+ letters of the query also appears in that skill's description (read from
the SKILL.md files it is given), fails when the query says "FAIL this run", and reports what it loaded through the documented marker file.
A real subprocess speaking the real protocol; only the decision rule is simple."""

import os
import re
import sys
from pathlib import Path


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4}


def description(skill_dir: str) -> str:
    text = (Path(skill_dir) / "SKILL.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("description:"):
            return line.partition(":")[2]
    return ""


def main() -> None:
    query = sys.argv[1]
    if "FAIL this run" in query:  # a run that fails (non-zero exit): tests of failed runs
        sys.exit(3)
    dirs = [os.environ["SKILLASSAY_SKILL_DIR"], *filter(None, os.environ.get("SKILLASSAY_OTHER_SKILL_DIRS", "").split(os.pathsep))]
    loaded = [Path(d).name for d in dirs if words(query) & words(description(d))]
    if loaded:
        Path(os.environ["SKILLASSAY_LOADED_SKILLS_FILE"]).write_text("\n".join(loaded[:1]) + "\n", encoding="utf-8")
    print("answered")


main()
