"""Improving a skill across iterations: history.json, blind A/B comparison of two versions, and
the analysis of why the winner won.

Takes iterations; hands on history.json, comparison and analysis files.
"""
