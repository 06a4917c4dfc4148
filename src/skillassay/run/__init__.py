"""Running a benchmark: plan the trials, execute each through an executor plugin, reuse finished
ones, then hand the runs to grading and aggregation.

Takes a checked spec; hands on run folders (outputs, transcript, metrics.json, timing.json).
"""
