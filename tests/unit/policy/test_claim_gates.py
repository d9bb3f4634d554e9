"""The claims reader skips work on clauses that cannot match (issue 48: a 2,000-character
answer read in under 1 ms). A gate that skips a clause a pattern would match is a missed
claim: each gate is checked against every string its pattern matches, spelt out from the
pattern (tests/regex_language.py)."""

from __future__ import annotations

import re

import pytest

from agent_cli.policy import claim_words as words
from agent_cli.policy.claims import claims, clauses
from tests.regex_language import spelt


def _negation_gate(lower: str) -> bool:
    found = words.WORDS.findall(lower)
    first = bool(found) and found[0] in words.NOT_FIRST
    return "?" in lower or first or not words.NOT_GATE.isdisjoint(found)


def test_the_negation_gate_lets_through_every_clause_the_negation_pattern_matches() -> None:
    matched = spelt(words.NOT_EN)
    assert len(matched) > 100
    assert [text for text in matched if not _negation_gate(text)] == []
    assert not _negation_gate("i cancelled order a100")  # and it does skip most claims


def test_the_condition_gate_lets_through_every_clause_that_opens_a_condition() -> None:
    for text in spelt(words.IF_EN):
        found = words.WORDS.findall(text)
        assert found[0] in words.IF_FIRST, text


@pytest.mark.parametrize(("kind", "pattern"), words.EN, ids=[kind for kind, _ in words.EN])
def test_every_wording_of_a_kind_holds_one_of_its_cues(kind: str, pattern: re.Pattern[str]) -> None:
    missed = [t for t in spelt(pattern) if kind not in words.cued_en(words.WORDS.findall(t))]
    assert missed == []


@pytest.mark.parametrize(("kind", "pattern"), words.JA, ids=[kind for kind, _ in words.JA])
def test_every_japanese_wording_of_a_kind_holds_one_of_its_cues(
    kind: str, pattern: re.Pattern[str]
) -> None:
    assert [text for text in spelt(pattern) if kind not in words.cued_ja(text)] == []


def test_the_acts_no_kind_names_are_read_whenever_their_words_are_there() -> None:
    passive = spelt(words.PASSIVE_DONE)
    assert [t for t in passive if "passive" not in words.cued_en(words.WORDS.findall(t))] == []
    assert [t for t in spelt(words.JA_DID) if "did" not in words.cued_ja(t)] == []


def test_no_japanese_cue_starts_inside_another_so_one_pass_finds_them_all() -> None:
    cues = {cue for found in words.JA_CUES_ALL.values() for cue in found}
    for first in cues:
        for second in cues - {first}:
            for cut in range(1, len(first)):
                tail = first[cut:]
                assert not (second.startswith(tail) and len(second) > len(tail)), (first, second)


def test_japanese_cues_found_in_one_pass_are_those_each_kind_searched_alone() -> None:
    for text in (
        "ご注文のキャンセルを承りました",
        "お支払い方法を変更し、払い戻しました",
        "配送先と送り先",
    ):
        alone = {k for k, cues in words.JA_CUES_ALL.items() if any(c in text for c in cues)}
        assert words.cued_ja(text) == alone


def test_the_done_words_tree_matches_exactly_its_words() -> None:
    done = re.compile(rf"{words.DONE_EN}\Z")
    for phrase in ("updated", "complete", "completed", "taken care of", "on the way", "set"):
        assert done.match(phrase), phrase
    for phrase in ("updat", "taken care", "on its", "sets", "complet"):
        assert not done.match(phrase), phrase


def test_clauses_keep_numbers_whole_and_stop_at_every_mark() -> None:
    said = [c for c, _ in clauses("Refunded 1,234.50 USD: order A100. Cancelled B200; done!")]
    assert said == ["Refunded 1,234.50 USD:", "order A100.", "Cancelled B200;", "done!"]


def test_a_claim_in_a_japanese_clause_between_english_ones_is_still_read() -> None:
    found = claims("Thanks for waiting. ご注文A100をキャンセルいたしました。 Have a nice day.")
    assert [(c.kind, c.orders) for c in found] == [("cancel", ("A100",))]


def test_a_hand_over_to_a_department_is_read_as_one() -> None:
    # Found by spelling the pattern out: no cue of its own stood before it.
    assert [c.kind for c in claims("専門部署に報告しました。")] == ["handover"]


def test_a_tree_of_phrases_matches_each_phrase_and_nothing_else() -> None:
    # The module builds its patterns at import; called here, a broken builder shows.
    tree = re.compile(rf"{words._trie(('ab', 'abc', 'b', 'on it'))}\Z")
    assert [p for p in ("ab", "abc", "b", "on it") if tree.match(p)] == ["ab", "abc", "b", "on it"]
    assert [p for p in ("a", "abcd", "bc", "on", "", "ac") if tree.match(p)] == []


def test_a_cue_of_words_stands_as_its_longest_word() -> None:
    assert words._word_cues(("called off", "back ", "in place of", "money")) == (
        "called",
        "back",
        "place",
        "money",
    )
