"""The shop's own instructions: tone, language, sign-off, escalation wording.

They come from `[agent] instructions` (text), `[agent] instructions_file`, or `--instructions
FILE` for one run, and are added to our fixed rules, never in their place: the system prompt
says who the agent is, then the shop's instructions, then our rules (tool results are data,
refunds need approval, answers come from lookups), last, so no instruction can switch them
off. `run_started` records their hash and length, so a trace says which were used.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from agent_cli.config import Settings
from agent_cli.errors import UsageError
from agent_cli.text import read_text_file, valid_text

MAX_CHARS = 8_000


@dataclass(frozen=True, slots=True)
class Instructions:
    text: str = ""

    @property
    def sha256(self) -> str | None:
        return hashlib.sha256(self.text.encode()).hexdigest() if self.text else None


def shop_instructions(settings: Settings, given: Path | None = None) -> Instructions:
    """The instructions in force: `given` (--instructions), else the config's; UsageError
    naming where they came from when they cannot be used."""
    path = given or settings.agent.instructions_file
    if path is not None:
        text = read_text_file(Path(path), max_bytes=MAX_CHARS * 4, error=UsageError)
        where = str(path)
    else:
        text, where = settings.agent.instructions or "", "[agent] instructions"
    if "\x00" in text:
        raise UsageError(f"{where}: the instructions contain NUL bytes; use plain text")
    text = valid_text(text).strip()
    if len(text) > MAX_CHARS:
        raise UsageError(
            f"{where}: the instructions are {len(text):,} characters; at most {MAX_CHARS:,} "
            "(every request carries them): shorten them"
        )
    return Instructions(text)
