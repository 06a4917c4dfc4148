"""Grading runs: assertion plugins and the LLM judge (with its cache), and re-grading a workspace.

Takes run folders; hands on grading.json per run.
"""
