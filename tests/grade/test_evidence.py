"""The judge's quote check (grade/evidence.py): a quote is a span of the output of real
length, not letters stitched together with "..."."""

from __future__ import annotations

import pytest

from skillassay.grade.evidence import Sources
from skillassay.grade.judge import JudgedVerdict, unsupported_reason

ANSWERS = ["Nothing to report for this ticket.", "The deploy went out on Monday.", "Done, see the log.",
           "I could not find the owner.", "No action needed.", "Closed as a duplicate of #12."]


@pytest.mark.parametrize("quote", ["o ... n ... w", "n…o…w", "no ... w", "t ... o ... d ... a ... y"])
def test_stitched_letters_are_not_a_quote(quote):
    """The audit's reproduction: a judge quoting "o ... n ... w" passed 12/12 answers lacking
    the word "now"; the pieces occur in order in almost any text."""
    for answer in ANSWERS:
        sources = Sources.of([("answer.md", answer)])
        assert sources.find(quote) is None, (quote, answer)
        reason = unsupported_reason(JudgedVerdict(quote=quote, passed=True, evidence="says now"), sources)
        assert reason is not None


def test_a_stitched_quote_gets_a_reason_that_says_so():
    sources = Sources.of([("answer.md", "Nothing to report for this ticket now.")])
    assert unsupported_reason(JudgedVerdict(quote="o ... n ... w", passed=True, evidence="x"), sources) == (
        "the judge's quote 'o ... n ... w' is too short to show anything")
    reason = unsupported_reason(JudgedVerdict(quote="to ... ticket now", passed=True, evidence="x"), sources)
    assert reason is not None and "stitches pieces shorter than 8 characters" in reason


def test_real_spans_still_count_whole_or_across_an_ellipsis():
    text = "Server: vpn.acme.test\nport: 4433\nProtocol: WireGuard"
    sources = Sources.of([("outputs/config.txt", text)])
    assert sources.find("port: 4433") == "outputs/config.txt"
    assert sources.find("Server: vpn.acme.test ... Protocol: WireGuard") == "outputs/config.txt"
    assert sources.find("Server: vpn.acme.test ... 4433") is None  # "4433" alone is a piece too short
    assert sources.find("Server ... WireGuard") is None


def test_a_short_output_can_be_quoted_whole():
    """An answer shorter than the minimum is quoted whole, never in part."""
    sources = Sources.of([("answer.md", "4433")])
    assert sources.find("4433") == "answer.md"
    assert Sources.of([("answer.md", "4433 ok")]).find("4433") is None
