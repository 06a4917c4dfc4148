"""Secrets remembered as salted hashes (store/secret_hashes.py): the record holds no value and
no encoded form, and masks them in text written later."""

from __future__ import annotations

import base64
import json

import pytest

from skillassay.store import secret_hashes, secret_windows
from skillassay.store.secret_hashes import HashedSecrets, new_record, parse_record

VALUE = "Zx81kQ0pLm2nVb7cXz9aQwTy"
SHORT = "Kx7#pQ2!vM9&zR4$"  # shorter than the anchor (its own anchor), strong enough to remember
WEAK = "pw12345678"  # 52 bits: its hash could be guessed


def masker(*values: str) -> HashedSecrets:
    parsed = parse_record(json.loads(json.dumps(new_record(values))))
    assert parsed is not None
    return HashedSecrets((parsed,))


def test_the_record_holds_no_value_or_encoding():
    record = json.dumps(new_record([VALUE, SHORT]))
    for value in (VALUE, SHORT):
        raw = value.encode()
        for form in (value, base64.b64encode(raw).decode()[:12], raw.hex()[:12], value[:6], value[-6:]):
            assert form not in record


def test_remembered_values_are_masked_plain_and_encoded():
    m = masker(VALUE, SHORT)
    raw = VALUE.encode()
    blob = base64.b64encode(b"x" + raw + b"yz").decode()
    text = f"key={VALUE}; pw {SHORT}; b64 {base64.b64encode(raw).decode()}; blob {blob}; hex {raw.hex()}"
    masked = m.text(text, "[REDACTED]")
    assert VALUE not in masked and SHORT not in masked and raw.hex() not in masked
    assert base64.b64encode(raw).decode()[:-4] not in masked and blob[4:-4] not in masked
    assert masked.startswith("key=[REDACTED]; pw [REDACTED]; b64 [REDACTED]")
    assert m.text("nothing secret here, é and all", "[REDACTED]") == "nothing secret here, é and all"


def test_a_value_across_a_chunk_boundary_is_found(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(secret_windows, "_CHUNK", 64)
    m = masker(VALUE)
    for pad in range(40, 70):
        data = b"." * pad + VALUE.encode() + b"." * 30
        assert m.bytes(data, b"#") == b"." * pad + b"#" + b"." * 30


def test_a_resumed_run_keeps_the_salt_and_adds_its_values():
    first = new_record([VALUE])
    second = new_record([SHORT], first)
    assert second["salt"] == first["salt"] and len(second["forms"]) > len(first["forms"])
    parsed = parse_record(second)
    assert parsed is not None
    assert HashedSecrets((parsed,)).text(f"{VALUE} {SHORT}", "#") == "# #"


@pytest.mark.parametrize("record", [None, [], {"scheme": "other"}, {"scheme": secret_hashes.SCHEME, "anchor": 16,
                                    "salt": "zz", "forms": []},
                                    {"scheme": secret_hashes.SCHEME, "anchor": 16, "salt": "00", "forms": 5},
                                    {"scheme": secret_hashes.SCHEME, "anchor": 16, "salt": "00",
                                     "forms": [["x"], [1, 2, 3], [10, 99, 1, "a", "b"]]}])
def test_a_damaged_record_adds_nothing(record):
    assert parse_record(record) is None


def test_every_anchor_carries_at_least_a_fragment_of_the_value():
    """Before: every form's anchor was its last 16 bytes, which for the hex form is 8 bytes of
    the key; with the anchor's 24-bit checksum a search that matches halves of a guess against
    each other finds those 8 key characters in about 2**24 salted hashes. Now an anchor spans
    32 bytes of a form: 16 bytes of the value in hex, 24 in base64, 32 as spelled."""
    key = "sk-ant-api03-" + "Qw7Zx81kQ0pLm2nVb7cXz9aQwTy4Rt" * 3
    raw = key.encode()
    record = new_record([key])
    for length, anchor_len, *_ in record["forms"]:
        assert anchor_len == min(length, secret_hashes.ANCHOR), (length, anchor_len)
    assert any(length == len(raw) * 2 for length, *_ in record["forms"])  # the hex forms are there
    assert min(anchor_len // 2 for length, anchor_len, *_ in record["forms"] if length == len(raw) * 2) >= 16
    m = masker(key)
    assert m.text(f"hex {raw.hex()} end", "[R]") == "hex [R] end"


def test_a_record_written_with_the_old_anchor_still_masks(monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as m:
        m.setattr(secret_hashes, "ANCHOR", secret_hashes.OLD_ANCHOR)
        old = json.loads(json.dumps(new_record([VALUE])))
    assert old["anchor"] == 16 and {f[1] for f in old["forms"]} == {16}
    parsed = parse_record(old)
    assert parsed is not None
    assert HashedSecrets((parsed,)).text(f"key={VALUE}.", "[R]") == "key=[R]."


@pytest.mark.parametrize(("weak", "forms_kept"), [("pw12345678", False), ("hunter2pw", False),
                                                   ("абвгдежзийклмнопрстуфхц", False),
                                                   ("3f9a1c0b7d2e4f6a8b9c0d1e2f3a4b5c", True)])
def test_a_value_whose_hash_could_be_guessed_is_not_remembered(weak: str, forms_kept: bool):
    """Review of cd29ab9: an 8-letter password was found from its record entry in 1.2 s
    (174,720 hashes: the 24-bit checksum splits the search), a Cyrillic one's first block in
    3 s, a hex token's blocks in about 2**40. An entry is kept only when the part of the value
    it covers is worth GUESS_BITS; a value with no entry left is counted, not remembered (a
    hex token keeps its whole-value entries, worth 165 bits, and loses its 16-byte blocks)."""
    record = new_record([weak, VALUE])
    assert record["too_weak_to_remember"] == (0 if forms_kept else 1)
    alone = new_record([weak])
    assert bool(alone["forms"]) == forms_kept and alone["blocks"] == {}
    if not forms_kept:
        assert parse_record(alone) is None
    key = "sk-ant-api03-" + "Qw7Zx81kQ0pLm2nVb7cXz9aQwTy4Rt" * 3
    kept = new_record([key])
    assert kept["too_weak_to_remember"] == 0 and kept["forms"] and kept["blocks"]
