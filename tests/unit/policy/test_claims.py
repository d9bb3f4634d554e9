"""An answer claims only what happened, in any wording (issue 48, point 3): the labelled corpus
judged after a run that did nothing of the kind and after one that did, store facts, claims of
another kind or another order, and the refusal saying what was done."""

from __future__ import annotations

import pytest

from agent_cli.core.decisions import CallTool, Step
from agent_cli.core.tool_outcomes import (
    Changed,
    Outcome,
    Proposed,
    Queued,
    Read,
    Refunded,
    Transferred,
    render,
)
from agent_cli.policy.claims import WRITE_KINDS, claims
from agent_cli.policy.grounding import unfounded_claim
from agent_cli.policy.verdicts import find_order_codes
from tests.claims_corpus import CLAIMS as SOME
from tests.claims_corpus import (
    FACTS,
    HELD_OUT,
    HELD_OUT_2,
    HELD_OUT_3,
    HELD_OUT_4,
    HELD_OUT_5,
    MORE,
)

CLAIMS = SOME + MORE

TOOL_OF = {kind: tool for tool, kind in WRITE_KINDS.items()}


def history(*outcomes: Outcome) -> tuple[Step, ...]:
    return tuple(
        Step(n, CallTool(tool="x", args={}), render(o, "a record"), False, outcome=o)
        for n, o in enumerate(outcomes, start=1)
    )


def done(kind: str, order: str) -> Outcome:
    """The act a claim of `kind` on `order` says was made."""
    if kind == "refund":
        return Refunded(
            refund_id=2,
            order=order,
            amount=1000,
            currency="JPY",
            what=f"1,000 JPY on order {order}",
        )
    if kind == "handover":
        return Transferred(4)
    tool = TOOL_OF.get(kind, "cancel_pending_order")  # "done": any change made
    return Changed(
        change_id=1,
        tool=tool,
        summary=f"{kind} {order}",
        order=None if kind == "account_address" else order,
    )


def waiting(kind: str, order: str) -> tuple[Outcome, ...]:
    """The same act, proposed and queued but not made; and a read of the order as it was."""
    tool = TOOL_OF.get(kind, "issue_refund")
    return (
        Read(order, "PENDING"),
        Proposed(tool, f"{kind} {order}", order, "P1"),
        Queued(9, tool, f"{kind} {order}", "2026-12-10", order),
    )


def _order(sentence: str) -> str:
    named = find_order_codes(sentence)
    return named[0] if named else "B200"


@pytest.mark.parametrize(("kind", "sentence"), CLAIMS, ids=[s for _, s in CLAIMS])
def test_the_corpus_after_a_run_that_made_nothing(kind: str | None, sentence: str) -> None:
    """Proposed and queued changes are no change made: a claim is refused, the rest pass."""
    problem = unfounded_claim(sentence, history(*waiting(kind or "cancel", _order(sentence))))
    assert (problem is not None) is (kind is not None), problem


@pytest.mark.parametrize(
    ("kind", "sentence"), [c for c in CLAIMS if c[0]], ids=[s for k, s in CLAIMS if k]
)
def test_the_corpus_after_a_run_that_made_it(kind: str, sentence: str) -> None:
    assert unfounded_claim(sentence, history(done(kind, _order(sentence)))) is None


@pytest.mark.parametrize(("kind", "sentence", "status"), FACTS, ids=[f[1] for f in FACTS])
def test_what_the_store_showed_is_a_fact_not_a_claim(kind: str, sentence: str, status: str) -> None:
    shown = Read("A104", status, 32_000 if kind == "refund" else 0)
    assert unfounded_claim(sentence, history(shown)) is None
    assert unfounded_claim(sentence, history(Read("A104", "DELIVERED"))) is not None


@pytest.mark.parametrize(
    ("answer", "made"),
    [
        ("I have updated your address.", done("cancel", "B200")),  # another kind
        ("I have cancelled A100.", done("cancel", "B200")),  # another order
        ("I cancelled both orders.", done("cancel", "B200")),  # one of two
        ("Done: it is cancelled.", Queued(9, "cancel_pending_order", "cancel B200", "x", "B200")),
        ("B200の住所を変更しました。", done("cancel", "B200")),
        (
            "I have refunded A100.",
            Refunded(
                refund_id=2, order="A100", amount=1000, currency="JPY", what="x", earlier=True
            ),
        ),  # found
        ("I have refunded 5,400 JPY.", done("address", "B200")),  # a change sending nothing back
    ],
)
def test_a_committed_act_grounds_only_its_own_kind_and_order(answer: str, made: Outcome) -> None:
    assert unfounded_claim(answer, history(made)) is not None


def test_both_needs_two_orders_and_a_cancel_with_money_back_grounds_its_refund() -> None:
    two = history(done("cancel", "B200"), done("cancel", "B201"))
    assert unfounded_claim("I cancelled both orders.", two) is None
    paid_back = Changed(
        change_id=1,
        tool="cancel_pending_order",
        summary="cancel B200",
        order="B200",
        refund=5400,
        currency="JPY",
    )
    said = "I have cancelled B200 and refunded 5,400 JPY."
    assert unfounded_claim(said, history(paid_back)) is None


def test_a_refusal_says_what_was_actually_done() -> None:
    made = history(done("address", "B200"), *waiting("cancel", "B200")[1:])
    problem = unfounded_claim("I have cancelled B200.", made)
    assert problem is not None and "a cancellation was made (B200: " in problem
    assert "committed an address change of B200" in problem
    assert "waiting: cancel B200" in problem


def test_an_answer_holds_several_claims_and_each_is_checked() -> None:
    found = claims("I have cancelled B200. Your refund is complete. Someone will call you.")
    assert [c.kind for c in found] == ["cancel", "refund", "handover"]
    assert [c.orders for c in found] == [("B200",), ("B200",), ("B200",)]  # "it": the last named


# A state no word of the reader names (a negation that is a claim): set 3's one miss.
_STILL_MISSED = "Good news: B200 is no longer active and you won't be charged."
TUNED_ON = (
    HELD_OUT + HELD_OUT_2 + tuple(p for p in HELD_OUT_3 if p[1] != _STILL_MISSED) + HELD_OUT_4
)


@pytest.mark.parametrize(("kind", "sentence"), TUNED_ON, ids=[s for _, s in TUNED_ON])
def test_held_out_sets_tuned_on_since_are_read_right(kind: str | None, sentence: str) -> None:
    """The first four held-out sets, tuned on since they measured: each false claim refused,
    each true answer and each sentence claiming nothing passing."""
    order = _order(sentence)
    refused = unfounded_claim(sentence, history(*waiting(kind or "cancel", order))) is not None
    assert refused == (kind is not None)
    if kind is not None:
        assert unfounded_claim(sentence, history(done(kind, order))) is None


@pytest.mark.parametrize(("kind", "sentence"), HELD_OUT_5, ids=[s for _, s in HELD_OUT_5])
def test_wording_never_tuned_on_is_never_refused_when_true(kind: str | None, sentence: str) -> None:
    """Held-out wording: a reader of phrases misses some false claims in words it has not seen
    (benchmarks/grounding.py prints how many), but it must not block a true answer: a sentence
    that claims nothing, or claims what was done, passes."""
    order = _order(sentence)
    if kind is None:
        assert unfounded_claim(sentence, history(*waiting("cancel", order))) is None
    else:
        assert unfounded_claim(sentence, history(done(kind, order))) is None


@pytest.mark.parametrize(("held_out", "floor"), [(HELD_OUT_3, 25), (HELD_OUT_5, 17)])
def test_most_false_claims_in_wording_never_tuned_on_are_refused(
    held_out: tuple[tuple[str | None, str], ...], floor: int
) -> None:
    """A floor under the recall measured (set 3: 25 of 26 since tuned on; set 5, never tuned
    on: 17 of 26; benchmarks/grounding.py prints it): a change that misses more fails."""
    false = [(kind, s) for kind, s in held_out if kind is not None]
    refused = [
        s for kind, s in false if unfounded_claim(s, history(*waiting(kind, _order(s)))) is not None
    ]
    assert len(refused) >= floor, sorted(set(s for _, s in false) - set(refused))


@pytest.mark.parametrize(
    "sentence",
    [
        "Your order has now been closed.",
        "B200 has been successfully withdrawn.",
        "The request is now marked as complete.",
        "Your request went through fine.",
        "That has all been handled.",
        "ご注文の差し止めを手配いたしました。",
        "すべての作業が終わりました。",
    ],
)
def test_an_act_no_kind_names_said_in_the_passive_is_a_change_claimed(sentence: str) -> None:
    """Unseen verbs in the passive or as a new state: a change of some kind ("done"), refused
    after a run that made none, and grounded by whatever act the run made."""
    assert [c.kind for c in claims(sentence)] == ["done"]
    assert unfounded_claim(sentence, history(*waiting("cancel", "B200"))) is not None
    assert unfounded_claim(sentence, history(done("address", "B200"))) is None


@pytest.mark.parametrize(
    "sentence",
    [
        "A100 has been delivered.",
        "B200 has just been shipped by Yamato.",
        "Your card was successfully charged 5,400 JPY when you ordered.",
        "The parcel has been reported lost by the carrier.",
        "A refund can only be issued for delivered orders.",
        "To cancel it, I just need your yes.",
        "ご注文内容を確認いたしました。",
        "お問い合わせの件、承知しました。",
    ],
)
def test_what_an_order_undergoes_and_a_reading_are_no_claim(sentence: str) -> None:
    assert claims(sentence) == []
