"""The help centre's tools: `search_help(query)` finds the best few articles (id, title, the
passage that matched) and `get_article(article_id)` reads one whole. An answer that uses an
article cites it as `[article-id]`; the grounding check refuses a citation of an article this
run did not retrieve (policy/grounding.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import Field

from agent_cli.core.seams import Observation
from agent_cli.store import help_articles
from agent_cli.store.help_articles import ARTICLE_ID
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools import Tool, ToolArgs, ToolFailure


class SearchArgs(ToolArgs):
    query: str = Field(min_length=2, max_length=300, description="the customer's question")


class ArticleArgs(ToolArgs):
    article_id: str = Field(pattern=ARTICLE_ID, max_length=80, description="e.g. shipping-times")


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def help_tools(open_store: Callable[[], OrderStore]) -> list[Tool[Any]]:
    def search(args: SearchArgs) -> Observation:
        hits = help_articles.search(open_store(), args.query)
        if not hits:
            raise ToolFailure(
                "no help article matches; answer from the order tools, or say the help centre "
                "does not cover it and offer a person (transfer_to_human_agents)"
            )
        text = "\n".join(f"[{hit.id}] {_quoted(hit.title)}: {_quoted(hit.passage)}" for hit in hits)
        found = [{"id": hit.id, "title": hit.title, "passage": hit.passage} for hit in hits]
        return Observation(text, record={"hits": found})

    def read(args: ArticleArgs) -> Observation:
        article = help_articles.get(open_store(), args.article_id)
        if article is None:
            raise ToolFailure(f"no article {args.article_id}; search_help finds them")
        text = f"[{article.id}] {_quoted(article.title)}\n{_quoted(article.body)}"
        record = {"id": article.id, "title": article.title, "body": article.body}
        return Observation(text, record=record)

    return [
        Tool(
            "search_help",
            "Search the shop's help centre (shipping, returns, refunds, warranty, payment) for "
            "questions about no particular order: the best articles' [id], title and passage. "
            "Cite one you use as [id].",
            SearchArgs,
            search,
        ),
        Tool(
            "get_article",
            "One help-centre article whole, by the id search_help gave.",
            ArticleArgs,
            read,
            after=("search_help",),
        ),
    ]
