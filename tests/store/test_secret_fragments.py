"""Pieces of a known secret (store/secret_fragments.py): masked from FRAGMENT characters while
the value is known, from a whole block when only iteration.json's hashes are; JSON stays JSON;
ordinary text is untouched; the record is small and has no hash per sliding window."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from skillassay.store.redact import MASK, _compiled
from skillassay.store.secret_forms import FRAGMENT
from skillassay.store.secret_hashes import HashedSecrets, new_record, parse_record

# Made-up keys of real lengths, derived here so no file holds them.
KEY = "sk-ant-api03-" + base64.urlsafe_b64encode(hashlib.sha256(b"fragments").digest() * 3).decode()[:95]
OTHERS = ["ghp_" + hashlib.sha256(b"gh").hexdigest()[:36], "Zx81kQ0pLm2nVb7cXz9aQwTy",
          "postgres://admin:" + hashlib.sha256(b"pw").hexdigest()[:20] + "@db.internal:5432/app"]


def remembered(*values: str) -> HashedSecrets:
    parsed = parse_record(json.loads(json.dumps(new_record(values))))
    assert parsed is not None
    return HashedSecrets((parsed,))


def wrapped(value: str, width: int) -> list[str]:
    b = base64.b64encode((value + "\n").encode()).decode()
    return [b[i:i + width] for i in range(0, len(b), width)]


def pieces_texts(k: str) -> list[str]:
    return [f"{k[:54]} {k[54:]}", f"{k[:54]},{k[54:]}", f"{k[:54]}\n\n{k[54:]}", f'"{k[:54]}" + "{k[54:]}"',
            f"{k[:36]} {k[36:72]} {k[72:]}", "\n".join(wrapped(k, 76)), "\n".join(wrapped(k, 64))]


def runs_of(text: str, value: str, width: int) -> list[str]:
    b64 = base64.b64encode(value.encode()).decode()
    needles = {s[i:i + width] for s in (value, b64) for i in range(len(s) - width + 1)}
    return sorted({text[i:i + width] for i in range(len(text) - width + 1)} & needles)


@pytest.mark.parametrize("case", range(7))
def test_pieces_are_masked_while_the_value_is_known(case: int) -> None:
    red = _compiled(frozenset([KEY, *OTHERS]))
    text = f"encoded:\n{pieces_texts(KEY)[case]}\ndone"
    for masked in (red.text(text), red.bytes(text.encode()).decode(), red.text(json.dumps(text))):
        assert runs_of(masked, KEY, FRAGMENT) == [], masked
        assert masked.startswith(("encoded:", '"encoded:')) and MASK in masked


@pytest.mark.parametrize("case", range(7))
def test_pieces_are_masked_from_the_remembered_hashes(case: int) -> None:
    """Only a piece holding a whole 16-byte block can be found from hashes: 2*FRAGMENT-1
    characters of the value are enough, whatever the cut."""
    m = remembered(KEY, *OTHERS)
    text = f"encoded:\n{pieces_texts(KEY)[case]}\ndone"
    for masked in (m.text(text, MASK), m.text(json.dumps(text), MASK)):
        assert runs_of(masked, KEY, 2 * FRAGMENT - 1) == [], masked
        assert masked.startswith(("encoded:", '"encoded:')) and masked.endswith(("done", 'done"'))


def test_hex_pieces_are_masked_from_the_remembered_hashes() -> None:
    h = KEY.encode().hex()
    masked = remembered(KEY).text(f"hex {h[:100]} / {h[100:]} end", MASK)
    assert masked.count(MASK) == 2 and h[30:60] not in masked and h[130:160] not in masked
    assert masked.startswith("hex ") and masked.endswith(" end")


@pytest.mark.parametrize("cut", range(20, 90))
def test_masking_never_breaks_a_json_escape(cut: int) -> None:
    """A piece that follows `\\n` in a JSON string may begin with the `n` by chance: the mask
    starts after the escape, so the file still parses."""
    k = KEY[:cut - 1] + "n" + KEY[cut:]  # the escape's `n` is also the value's character before the cut
    doc = json.dumps({"evidence": f"Matched {k[:cut]!r}\n{k[cut:]} and \"quoted\" \\ é"})
    for masked in (_compiled(frozenset([k])).text(doc), remembered(k).text(doc, MASK)):
        evidence = json.loads(masked)["evidence"]
        assert MASK in evidence and evidence.endswith(' and "quoted" \\ é')
        assert runs_of(evidence, k, 2 * FRAGMENT - 1) == []


ORDINARY = json.dumps({
    "expectations": [{"text": "The output matches /encoded:[\\s\\S]+/", "passed": True,
                      "evidence": "Matched 'encoded:\\n...' at char 0: \"hello\\nworld\""}],
    "summary": {"passed": 3, "failed": 1, "total": 4, "pass_rate": 0.75},
    "timing": {"total_duration_seconds": 12.5}, "run_id": "eval-3/with_skill/run-2",
    "sha256": hashlib.sha256(b"x").hexdigest(), "blob": base64.b64encode(hashlib.sha512(b"y").digest()).decode(),
    "uuid": "5f0c8a9e-3b1d-4c2a-9e7f-0a1b2c3d4e5f", "path": "/tmp/skillassay-ws/iteration-1/eval-3/outputs/notes.md",
    "transcript": "I will base64-encode the file.\n$ echo $HOME | base64\nL3Jvb3QK\nsk-ant-is-not-a-key here; "
                  "The quick brown fox jumps over the lazy dog 0123456789abcdefABCDEF ==== ---- ____ ++++ ////",
}, indent=2)


def test_ordinary_text_is_untouched() -> None:
    assert _compiled(frozenset([KEY, *OTHERS])).text(ORDINARY) == ORDINARY
    assert _compiled(frozenset([KEY, *OTHERS])).bytes(ORDINARY.encode()) == ORDINARY.encode()
    assert remembered(KEY, *OTHERS).text(ORDINARY, MASK) == ORDINARY


def test_the_record_is_small_and_hashes_whole_blocks_only() -> None:
    """Hashes of sliding windows would give a key with a known prefix away one character at a
    time; the blocks are disjoint views of 16 bytes (their last one is the old anchor's)."""
    record = new_record([KEY])
    text = json.dumps(record)
    assert len(json.dumps(record["blocks"])) < 1000
    for piece in (KEY[13:29], base64.b64encode(KEY.encode()).decode()[20:36], KEY.encode().hex()[40:60]):
        assert piece not in text
    parsed = parse_record(record)
    assert parsed is not None
    widths = sorted({b[0] for b in parsed[2]})
    assert widths == [16, 20, 32] and len(parsed[2]) <= 9 * (-(-len(KEY) // FRAGMENT))


def test_a_record_written_before_blocks_still_masks_whole_forms() -> None:
    old = new_record([KEY])
    del old["blocks"]
    parsed = parse_record(old)
    assert parsed is not None and parsed[2] == ()
    assert HashedSecrets((parsed,)).text(f"key {KEY} end", MASK) == f"key {MASK} end"
    damaged = {**new_record([KEY]), "forms": [], "blocks": {"16": "%%%", "x": "AAAA", "999": "AAAA"}}
    assert parse_record(damaged) is None


def _rem(*values: str) -> HashedSecrets:
    parsed = parse_record(json.loads(json.dumps(new_record(values))))
    assert parsed is not None
    return HashedSecrets((parsed,))


@pytest.mark.parametrize("value", ["пароль-секретный-ключ", "x" + "é" * 10 + "Ab3dEf7hIjKl9mNoPq2r",
                                   "ключ-" + "Zx81kQ0pLm2nVb7cXz9aQwTy" + "-ёжик"])
def test_a_masked_piece_never_cuts_a_character(value: str) -> None:
    """Review of cd29ab9: windows start and end at byte offsets, so a piece's mask cut a
    multi-byte character in half (benchmark.json got invalid UTF-8, text a U+FFFD)."""
    for cut in range(1, len(value)):
        for piece in (value[:cut] + "я", "sha: " + value[cut:], value[cut:] + "ü"):
            doc = json.dumps({"e": piece}, ensure_ascii=False).encode()
            for out in (_compiled(frozenset([value])).bytes(doc), _rem(value).bytes(doc, MASK.encode())):
                assert json.loads(out.decode("utf-8")) is not None, (value, piece, out)
            text = _compiled(frozenset([value])).text(doc.decode())
            assert "\ufffd" not in text and json.loads(text) is not None


@pytest.mark.parametrize("value", ["é" + "Qw3rTy9uIoP4sDf", "\nQw3rTy9uIoP4sDfGh", "Zx81kQ0pLm2nVb7c" + "é" + "Xz9aQwTy4Rt5Yu6Io"])
def test_a_value_inside_a_json_string_inside_a_json_string_stays_json(value: str) -> None:
    """Review of cd29ab9: a whole value masked where it sits JSON-escaped twice (a tool's input
    in a transcript) started after an escaping backslash: `\\[REDACTED]` is no JSON, and the
    file written (grading.json) could no longer be read."""
    for ascii_only in (True, False):
        doc = json.dumps({"tool_input": json.dumps({"password": value}, ensure_ascii=ascii_only)},
                         ensure_ascii=ascii_only)
        redactor = _compiled(frozenset([value]))
        text, raw = redactor.text(doc), redactor.bytes(doc.encode())
        for out in (text, raw.decode("utf-8")):
            inner = json.loads(json.loads(out)["tool_input"])
            assert value not in inner["password"] and MASK in inner["password"], out
        hashed = _rem(value).bytes(doc.encode(), MASK.encode())
        json.loads(json.loads(hashed.decode("utf-8"))["tool_input"])
