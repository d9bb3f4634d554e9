"""Order codes the customer seems to have mistyped, for the offline playbook: each looked up as
written, and what the lookups point to (a did-you-mean of the store's, or nothing: a customer not
yet identified is suggested no real code)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from agent_cli.core.decisions import AskUser, CallTool, Step
from agent_cli.core.tool_outcomes import NotFound
from agent_cli.policy.verdicts import suspect_codes


class TypoWords(Protocol):
    """The playbook's words for the questions about a code."""

    @property
    def did_you_mean(self) -> str: ...
    @property
    def no_such_code(self) -> str: ...
    @property
    def or_(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Typos:
    """Codes the customer seems to have mistyped (A10O, A-100, order 100), each looked up as
    written (letters and digits only), and the real codes the lookups point to: asked about,
    never acted on until the customer says which."""

    cleaned: tuple[str, ...]  # the lookups to make
    meant: tuple[str, ...]  # the real codes they point to, once looked up
    replaced: frozenset[str]  # codes of the question that are typos, not orders

    @classmethod
    def of(cls, goal: str, codes: list[str], lookups: dict[str, Step]) -> Typos:
        cleaned = tuple(dict.fromkeys(cleaned_code(s) for s in suspect_codes(goal)))
        meant: list[str] = []
        replaced: set[str] = set()
        for code in (*cleaned, *codes):
            step = lookups.get(code)
            if step is None or step.is_error:
                continue
            if code in cleaned and not isinstance(step.outcome, NotFound):
                meant.append(code)  # "A-100": A100 exists, but it is not what was written
            elif isinstance(step.outcome, NotFound) and step.outcome.nearest:
                meant += step.outcome.nearest
                replaced.add(code)
        return cls(cleaned, tuple(dict.fromkeys(meant)), frozenset(replaced))

    def unknown(self, lookups: dict[str, Step]) -> list[str]:
        """The codes written that no order has, with nothing suggested (nobody identified)."""
        return [
            code
            for code in self.cleaned
            if (step := lookups.get(code)) is not None
            and isinstance(step.outcome, NotFound)
            and not step.outcome.nearest
        ]

    def next_action(
        self, lookups: dict[str, Step], replies: list[str], writer: TypoWords
    ) -> CallTool | AskUser | None:
        for code in self.cleaned:
            if code not in lookups:
                thought = f"{code} may be a mistyped order code; the store suggests the nearest."
                return CallTool(tool="lookup_order", args={"order_code": code}, thought=thought)
        if self.meant and not replies:
            return AskUser(question=writer.did_you_mean.format(codes=writer.or_.join(self.meant)))
        if (unknown := self.unknown(lookups)) and not replies:
            return AskUser(question=writer.no_such_code.format(codes=writer.or_.join(unknown)))
        return None


def cleaned_code(written: str) -> str:
    """A code as written, looked up as letters and digits only ("order 100": the digits)."""
    if re.match(r"(?i)order|注文", written):
        return re.sub(r"\D", "", written)
    return re.sub(r"[^A-Za-z0-9]", "", written).upper()
