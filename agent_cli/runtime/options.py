"""What a run is asked with: the command-line options shared by `ask` and `chat` (and the
Python API), and the checks of a question and a --today date."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from agent_cli.config import Settings, load_settings
from agent_cli.dates import system_today
from agent_cli.errors import UsageError


@dataclass(frozen=True, slots=True)
class ProviderOptions:
    """Command-line choices of the model, shared by the commands that reach a provider."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    mode: str | None = None
    config: Path | None = None
    stream: bool | None = None  # False: --no-stream

    def overrides(self) -> dict[str, dict[str, object]]:
        return {
            "provider": {
                "name": self.provider,
                "model": self.model,
                "base_url": self.base_url,
                "mode": self.mode,
                "stream": self.stream,
            }
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """The options that shape a run, common to `agent ask` and `agent chat`."""

    dry_run: bool = False
    script: Path | None = None
    max_steps: int | None = None
    timeout: float | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    today: str | None = None
    trace: Path | None = None
    quiet: bool = False
    grounding: bool | None = None  # False: --no-grounding
    provider: ProviderOptions = field(default_factory=ProviderOptions)
    instructions: Path | None = None  # --instructions FILE: the shop's, for this run

    def settings(self) -> Settings:
        limits = {
            "max_steps": self.max_steps,
            "timeout": self.timeout,
            "max_tokens": self.max_tokens,
            "max_cost": self.max_cost,
            "grounding": self.grounding,
        }
        return load_settings(
            self.provider.config, overrides={"limits": limits, **self.provider.overrides()}
        )


def check_question(question: str, max_chars: int) -> str:
    """Refuse empty, oversized, NUL-containing or undecodable questions with a clear message."""
    if "\x00" in question:
        raise UsageError("The question contains NUL bytes; pass plain text")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError("The question is not valid UTF-8 text") from None
    question = question.strip()
    if not question:
        raise UsageError('The question is empty; try: agent ask "Is order A100 refundable?"')
    if len(question) > max_chars:
        raise UsageError(
            f"The question is {len(question):,} characters; the limit is {max_chars:,} "
            "(limits.max_question_chars)"
        )
    return question


def parse_today(value: str | None) -> date:
    if value is None:
        return system_today()
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"--today {value!r} is not a date; use YYYY-MM-DD") from None
