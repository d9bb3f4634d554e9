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
MAX_CODES_NAMED = 10

# ASCII word boundaries: "注文A100は" has one before A; `_` is a word character, so _fold
# turns it into a space first ("_A100_" is Markdown emphasis). Faster than lookarounds.
_CODE = re.compile(r"\b[A-Za-z]{1,3}[0-9]{2,9}\b", re.ASCII)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+")
_UNCHECKED = re.compile(
    r"could not|couldn't|cannot|can't|unable|not able|was not looked up"
    r"|確認できません|確認できませんでした|判断できません",
    re.IGNORECASE,
)


def find_order_codes(text: str) -> list[str]:
    """Order codes in `text`, upper-cased, in order of first mention (full-width folded)."""
    return list(dict.fromkeys(match.upper() for match in _CODE.findall(_fold(text))))


def _fold(text: str) -> str:
    folded = text if text.isascii() else unicodedata.normalize("NFKC", text)
    return folded.replace("_", " ")


def looked_up(history: tuple[Step, ...]) -> set[str]:
    """The order codes with a successful lookup in `history` (NOT_FOUND is a success)."""
    return {
        _fold(str(step.call.args.get("order_code", ""))).upper()
        for step in history
        if step.call is not None and step.call.tool == LOOKUP_TOOL and not step.is_error
    }


def ground_answer(answer: str, history: tuple[Step, ...]) -> str | None:
    """None when the answer is grounded; else the problem, worded for the model to fix."""
    folded = _fold(answer)
    codes = _CODE.findall(folded)
    if not codes:
        return None
    known = looked_up(history)
    if all(code.upper() in known for code in codes):
        return None  # the common case, decided without splitting sentences
    named_in: dict[str, list[str]] = {}  # code -> the sentences naming it, found in one pass
    for sentence in _SENTENCE_END.split(folded):
        for code in find_order_codes(sentence):
            named_in.setdefault(code, []).append(sentence)
    unchecked = [
        code
        for code, sentences in named_in.items()
        if code not in known and not all(_UNCHECKED.search(s) for s in sentences)
    ]
    if not unchecked:
        return None
    named = ", ".join(unchecked[:MAX_CODES_NAMED])
    if len(unchecked) > MAX_CODES_NAMED:  # the repair stays short whatever the answer held
        named += f" and {len(unchecked) - MAX_CODES_NAMED} more"
    return (
        f"the answer states facts about order {named}, which this run has not looked up "
        f"successfully; call {LOOKUP_TOOL} for {named} first and answer from its result, "
        "or say that it could not be checked"
    )
