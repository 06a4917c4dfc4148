"""The workspace on disk: where each file lives, atomic JSON writes, the workspace lock, finding
run folders and reading them back into records, and redaction of secrets.

Takes paths and models; hands on `TrialRecord`s and files written whole or not at all.
"""
