"""What users write and we validate before anything runs: the skill folder, SKILL.md, evals.json,
benchmark_config.json, and the `init` scaffold.

Takes files from the user; hands on checked `Skill`, `EvalSet` and `BenchmarkConfig` values.
"""
