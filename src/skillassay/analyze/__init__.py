"""From graded runs to a verdict: numerical building blocks, suite statistics, benchmark.json and
benchmark.md, iteration-to-iteration comparison and the three-state gate.

Takes `TrialRecord`s (or an iteration folder); hands on Benchmark, comparison and GateResult.
"""
