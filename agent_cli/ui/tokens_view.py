"""`agent serve`'s tokens as a table (tab-separated when piped): never the token itself, which
is shown once, when made."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from agent_cli.store.tokens import Token
from agent_cli.ui.console import clean_text
from agent_cli.ui.tables import print_rows, whole_table

_HEADERS = ("name", "scope", "created (UTC)", "by", "revoked (UTC)")


def show_tokens(console: Console, tokens: Sequence[Token]) -> None:
    table = whole_table(*_HEADERS)
    rows = [
        [
            Text(t.name),
            Text(t.scope),
            Text(t.created_at),
            Text(clean_text(t.created_by)),
            Text(t.revoked_at or "-"),
        ]
        for t in tokens
    ]
    print_rows(console, table, rows)
