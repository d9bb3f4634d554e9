"""The grounding check: a support answer may only state facts about orders this run looked up.

A model can answer "order A100 is not refundable" without calling a tool at all. Before a final
answer is accepted, every order code it names must have a successful `lookup_order` in this
run's history, unless each sentence naming that code says it could not be checked ("I could not
check order A100: ..."). An answer that fails is fed back to the model as a repair.

Order codes in text are letters then digits (`A100`, `ab12`, full-width folded); the tool itself
accepts any ASCII letters and digits, but free text needs a narrower pattern, or every word
would be a code.
"""

from __future__ import annotations

import re
import unicodedata

from agent_cli.decisions import Step

LOOKUP_TOOL = "lookup_order"

_CODE = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{1,3}[0-9]{2,9})(?![A-Za-z0-9])")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+")
_UNCHECKED = re.compile(
    r"could not|couldn't|cannot|can't|unable|not able|was not looked up"
    r"|確認できません|確認できませんでした|判断できません",
    re.IGNORECASE,
)


def find_order_codes(text: str) -> list[str]:
    """Order codes in `text`, upper-cased, in order of first mention (full-width folded)."""
    folded = unicodedata.normalize("NFKC", text)
    return list(dict.fromkeys(match.upper() for match in _CODE.findall(folded)))


def looked_up(history: tuple[Step, ...]) -> set[str]:
    """The order codes with a successful lookup in `history` (NOT_FOUND is a success)."""
    return {
        unicodedata.normalize("NFKC", str(step.call.args.get("order_code", ""))).upper()
        for step in history
        if step.call is not None and step.call.tool == LOOKUP_TOOL and not step.is_error
    }


def ground_answer(answer: str, history: tuple[Step, ...]) -> str | None:
    """None when the answer is grounded; else the problem, worded for the model to fix."""
    known = looked_up(history)
    sentences = [s for s in _SENTENCE_END.split(unicodedata.normalize("NFKC", answer)) if s]
    unchecked = [
        code
        for code in find_order_codes(answer)
        if code not in known and not _all_say_unchecked(code, sentences)
    ]
    if not unchecked:
        return None
    named = ", ".join(unchecked)
    return (
        f"the answer states facts about order {named}, which this run has not looked up "
        f"successfully; call {LOOKUP_TOOL} for {named} first and answer from its result, "
        "or say that it could not be checked"
    )


def _all_say_unchecked(code: str, sentences: list[str]) -> bool:
    naming = [s for s in sentences if code in find_order_codes(s)]
    return all(_UNCHECKED.search(sentence) for sentence in naming)
