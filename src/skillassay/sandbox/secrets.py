"""What of the environment a sandboxed program may see: nothing that looks like a secret
(keys, tokens, passwords, credentials, the executor's own key variables). Token *counts*
(MAX_THINKING_TOKENS, CLAUDE_CODE_MAX_OUTPUT_TOKENS) are settings, not secrets, and stay."""

from __future__ import annotations

from collections.abc import Mapping

from skillassay.store.redact import looks_secret


def is_secret_name(name: str) -> bool:
    return looks_secret(name) and not name.upper().endswith("_TOKENS")


def scrubbed(env: Mapping[str, str], keep: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` without secret-looking variables, then `keep` (placeholders, explicit `-o env`)."""
    out = {k: v for k, v in env.items() if not is_secret_name(k)}
    out.update(keep or {})
    return out
