"""A tiny command-line agent for the multi-turn tests (the `command` executor runs it once per
turn): it answers with its turn, the message and the earlier user messages it was handed in
SKILLASSAY_HISTORY_FILE, leaves a file per turn in its work dir, appends "turn <k> <pid>" to
LOG, and, while the file FLAG exists, fails (`fail`) or sleeps (`sleep`) on turn 2 after
leaving stale.txt behind. Usage: turns_agent.py LOG FLAG fail|sleep PROMPT"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

log, flag, mode, prompt = sys.argv[1:5]
turn = int(os.environ["SKILLASSAY_TURN"])
history = json.loads(Path(os.environ["SKILLASSAY_HISTORY_FILE"]).read_text(encoding="utf-8"))
with open(log, "a", encoding="utf-8") as fh:
    fh.write(f"turn {turn} {os.getpid()}\n")
Path(f"turn{turn}.txt").write_text(prompt, encoding="utf-8")
if turn == 2 and Path(flag).exists():
    Path("stale.txt").write_text("left by an attempt that never finished", encoding="utf-8")
    if mode == "fail":
        sys.exit("turn 2 broke")
    time.sleep(60)
heard = " / ".join(m["content"] for m in history if m["role"] == "user")
answered = len([m for m in history if m["role"] == "assistant"])
print(f"turn {turn} of {os.environ['SKILLASSAY_TURNS']}: {prompt} | heard before: {heard} | answers before: {answered}")
