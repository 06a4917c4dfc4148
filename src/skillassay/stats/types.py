"""The plain types the statistics pass around."""

from __future__ import annotations

from typing import Literal

Interval = tuple[float, float]
Direction = Literal["min", "max"]  # a threshold the figure must reach (min) or stay under (max)
Decision = Literal["PASS", "FAIL", "INCONCLUSIVE"]
