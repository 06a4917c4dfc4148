"""Encoded forms of a known secret (store/secret_forms.py, through the disk redactor): base64
at every alignment and in both alphabets, hex, JSON escapes, a split across a line break; and
URL userinfo (store/redact.py)."""

from __future__ import annotations

import base64
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from skillassay.store.redact import MASK, _compiled, mask_userinfo, register_env_option
from skillassay.store.secret_forms import base64_core

VALUE = "Zx81kQ0pLm2nVb7cXz9aQwTy"


def test_base64_in_every_spelling_and_hex_are_masked():
    red = _compiled(frozenset([VALUE]))
    raw = VALUE.encode()
    spelled = [base64.b64encode(raw).decode(), base64.b64encode(raw).decode().rstrip("="),
               base64.urlsafe_b64encode(b"\xfb\xff" + raw).decode(), raw.hex(), raw.hex().upper()]
    for text in spelled:
        assert red.text(f"got {text} here").startswith("got "), text
        masked = red.text(f"got {text} here")
        assert MASK in masked and VALUE[:8] not in masked, (text, masked)
        assert red.bytes(f"got {text}".encode()) == masked.removesuffix(" here").encode()


@settings(max_examples=200, deadline=None)
@given(value=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=8, max_size=40),
       before=st.binary(max_size=5), after=st.binary(max_size=5), urlsafe=st.booleans())
def test_a_value_inside_any_base64_blob_is_masked(value, before, after, urlsafe):
    """Whatever bytes surround it, the characters that encode only the value are masked."""
    raw = value.encode()
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    blob = encode(before + raw + after).decode()
    core = base64_core(raw, len(before) % 3)
    if urlsafe:
        core = core.translate(str.maketrans("+/", "-_"))
    masked = _compiled(frozenset([value])).text(blob)
    assert core not in masked and MASK in masked


def test_a_value_split_across_a_line_is_masked():
    red = _compiled(frozenset([VALUE]))
    for sep in ("\n", "\r\n", "  \n   ", "\\n"):  # the last: a newline inside a JSON string
        for cut in (1, 8, 12, 23):
            text = f"first half: {VALUE[:cut]}{sep}{VALUE[cut:]} end"
            masked = red.text(text)
            assert masked == f"first half: {MASK} end", (sep, cut, masked)
            assert red.bytes(text.encode()) == masked.encode()
    assert red.text(json.dumps(f"a {VALUE[:10]}\n{VALUE[10:]}")) == json.dumps(f"a {MASK}")


def test_url_userinfo_is_masked_everywhere():
    red = _compiled(frozenset())
    for url, shown in [("postgres://admin:pw@db:5432/x", "postgres://[REDACTED]@db:5432/x"),
                       ("https://ghp_token123@github.com/o/r.git", "https://[REDACTED]@github.com/o/r.git"),
                       ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
                       ("https://example.com/@user/page", "https://example.com/@user/page")]:
        assert red.text(f"url {url} ok") == f"url {shown} ok"
        assert red.bytes(f'"{url}"'.encode()) == f'"{shown}"'.encode()
        assert mask_userinfo(url) == shown


def test_every_env_option_value_is_secret_unless_named_public():
    from skillassay.store.redact import _registered

    register_env_option({"env": {"DB_URL": "postgres://db/app-42", "LOG_LEVEL": "verbose-debug", "N": "1"},
                         "public_env": ["LOG_LEVEL"]})
    assert "postgres://db/app-42" in _registered and "verbose-debug" not in _registered
    assert "1" not in _registered  # too short to mask without masking ordinary text


def test_public_env_must_be_a_list_of_names():
    import pytest

    from skillassay.errors import InputError

    with pytest.raises(InputError, match="expected a JSON list of variable names"):
        register_env_option({"env": {"A": "b"}, "public_env": "A"})
