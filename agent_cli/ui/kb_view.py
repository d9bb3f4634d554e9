"""The help centre on screen: the articles as a table (tab-separated when piped), a search's
hits, and one article."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from agent_cli.domain.records import Article
from agent_cli.store.help_articles import Hit
from agent_cli.ui.console import clean_text
from agent_cli.ui.tables import print_rows, whole_table


def show_articles(console: Console, articles: Sequence[Article]) -> None:
    if not articles and console.is_terminal:
        console.print("No help articles: agent kb import PATH adds them.")
        return
    rows = [[Text(a.id), Text(clean_text(a.title)), Text(a.updated_at)] for a in articles]
    print_rows(console, whole_table("id", "title", "updated (UTC)"), rows)


def show_hits(console: Console, hits: Sequence[Hit]) -> None:
    if not hits and console.is_terminal:
        console.print("No article matches.")
        return
    rows = [[Text(h.id), Text(clean_text(h.title)), Text(clean_text(h.passage))] for h in hits]
    print_rows(console, whole_table("id", "title", "passage", folded=("passage",)), rows)


def show_article(console: Console, article: Article) -> None:
    console.print(Text(f"[{article.id}] ", style="dim").append(clean_text(article.title), "bold"))
    console.print(Text(clean_text(article.body)))
