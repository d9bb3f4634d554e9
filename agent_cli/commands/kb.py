"""`agent kb import | list | show | search`: the shop's help centre in the order store."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from agent_cli.config import load_settings
from agent_cli.errors import ArticleFileError, ArticleNotFound
from agent_cli.runtime.stores import opened_store
from agent_cli.store import help_articles
from agent_cli.store.desk import Article
from agent_cli.store.help_articles import ARTICLE_ID
from agent_cli.text import print_json_lines, read_text_file
from agent_cli.ui import make_console
from agent_cli.ui.kb_view import show_article, show_articles, show_hits

MAX_ARTICLE_BYTES = 2**20
MAX_ARTICLES = 5_000
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def read_articles(path: Path) -> list[Article]:
    """A Markdown file, or every `*.md` file of a folder (and its subfolders), as articles: the
    first heading is the title, the file name (without `.md`) the id. ArticleFileError naming
    the file and what is wrong; nothing is read into the store before every file is good."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.md") if p.is_file())
        if not files:
            raise ArticleFileError(f"{path}: no Markdown (.md) files in it")
    elif path.suffix.lower() == ".md":
        files = [path]
    else:
        raise ArticleFileError(f"{path}: not a Markdown file (.md) or a folder of them")
    if len(files) > MAX_ARTICLES:
        raise ArticleFileError(f"{path}: {len(files):,} files; at most {MAX_ARTICLES:,}")
    articles: dict[str, Article] = {}
    for file in files:
        article = _article(file)
        if article.id in articles:
            raise ArticleFileError(f"{file}: a second article with the id {article.id!r}")
        articles[article.id] = article
    return list(articles.values())


def _article(file: Path) -> Article:
    article_id = file.stem.lower()
    if not re.fullmatch(ARTICLE_ID, article_id) or len(article_id) > 80:
        raise ArticleFileError(
            f"{file}: the file name makes the article's id; use lower-case letters, digits and "
            "hyphens (shipping-times.md)"
        )
    text = read_text_file(file, max_bytes=MAX_ARTICLE_BYTES, error=ArticleFileError)
    if "\x00" in text:
        raise ArticleFileError(f"{file}: holds a NUL character; is it a text file?")
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if found := _HEADING.match(line):
            body = "\n".join(lines[number + 1 :]).strip()
            return Article(article_id, found.group(1), body)
        if line.strip():
            break
    raise ArticleFileError(f"{file}: the first line must be a heading (# Title)")


def import_kb(path: Path, *, config: Path | None) -> None:
    articles = read_articles(path)
    with opened_store(load_settings(config)) as store:
        known = {a.id for a in help_articles.listed(store)}
        help_articles.save_articles(store, articles)
    replaced = sum(a.id in known for a in articles)
    print(
        f"Imported {len(articles)} article(s): {len(articles) - replaced} new, {replaced} updated"
    )


def list_kb(*, json_output: bool, config: Path | None) -> None:
    with opened_store(load_settings(config)) as store:
        articles = help_articles.listed(store)
    if json_output:
        print_json_lines(dataclasses.asdict(a) for a in articles)
        return
    show_articles(make_console(), articles)


def show_kb(article_id: str, *, json_output: bool, config: Path | None) -> None:
    with opened_store(load_settings(config)) as store:
        article = help_articles.get(store, article_id)
    if article is None:
        raise ArticleNotFound(f"No article {article_id!r}; see 'agent kb list'")
    if json_output:
        print_json_lines([dataclasses.asdict(article)])
        return
    show_article(make_console(), article)


def search_kb(text: str, *, limit: int, json_output: bool, config: Path | None) -> None:
    with opened_store(load_settings(config)) as store:
        hits = help_articles.search(store, text, limit=limit)
    if json_output:
        print_json_lines(dataclasses.asdict(h) for h in hits)
        return
    show_hits(make_console(), hits)
