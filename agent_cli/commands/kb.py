"""`agent kb import | list | show | search`: the shop's help centre in the order store."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

from agent_cli.config import load_settings
from agent_cli.domain.records import Article
from agent_cli.errors import ArticleFileError, ArticleNotFound
from agent_cli.runtime.stores import opened_store
from agent_cli.store import help_articles
from agent_cli.store.help_articles import ARTICLE_ID
from agent_cli.text import print_json_lines, read_text_file
from agent_cli.ui import make_console
from agent_cli.ui.kb_view import show_article, show_articles, show_hits

MAX_ARTICLE_BYTES = 2**20
MAX_ARTICLES = 5_000
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def read_articles(path: Path, *, follow_links: bool = False) -> list[Article]:
    """A Markdown file, or every `*.md` file of a folder (and its subfolders), as articles: the
    first heading is the title, the file name (without `.md`) the id. ArticleFileError naming
    the file and what is wrong; nothing is read into the store before every file is good.

    A symbolic link that leads out of the folder imported (or a file named that is a link to
    another place) is refused unless `follow_links`: what customers are served is what the
    folder holds, never a file elsewhere on the machine (a key, a password) a link points at.
    Links to folders are never walked into."""
    if path.is_dir():
        files = _markdown_files(path)
        if not files:
            raise ArticleFileError(f"{path}: no Markdown (.md) files in it")
        root = path.resolve()
    elif path.suffix.lower() == ".md":
        files, root = [path], path.parent.resolve()
    else:
        raise ArticleFileError(f"{path}: not a Markdown file (.md) or a folder of them")
    if not follow_links:
        for file in files:
            _inside(file, root)
    if len(files) > MAX_ARTICLES:
        raise ArticleFileError(f"{path}: {len(files):,} files; at most {MAX_ARTICLES:,}")
    articles: dict[str, Article] = {}
    for file in files:
        article = _article(file)
        if article.id in articles:
            raise ArticleFileError(f"{file}: a second article with the id {article.id!r}")
        articles[article.id] = article
    return list(articles.values())


def _markdown_files(folder: Path) -> list[Path]:
    """The folder's `*.md` files, its subfolders' too, without walking into linked folders."""
    found = [
        Path(top) / name
        for top, _, names in os.walk(folder, followlinks=False)
        for name in names
        if name.lower().endswith(".md")
    ]
    return sorted(found)


def _inside(file: Path, root: Path) -> None:
    """Refuse a link whose target is outside `root` (the folder imported, or the file's own)."""
    if not file.is_symlink():
        return
    target = file.resolve()
    if target != root and root not in target.parents:
        raise ArticleFileError(
            f"{file}: a link to {target}, outside {root}; nothing was imported: copy the file "
            "in, or pass --follow-links if it is meant to be served"
        )


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


def import_kb(
    path: Path, *, config: Path | None, follow_links: bool = False, replace: bool = False
) -> None:
    articles = read_articles(path, follow_links=follow_links)
    with opened_store(load_settings(config)) as store:
        known = {a.id for a in help_articles.listed(store)}
        help_articles.save_articles(store, articles, replace=replace)
    replaced = sum(a.id in known for a in articles)
    removed = len(known - {a.id for a in articles}) if replace else 0
    gone = f", {removed} removed" if replace else ""
    print(
        f"Imported {len(articles)} article(s): {len(articles) - replaced} new, "
        f"{replaced} updated{gone}"
    )


def delete_kb(article_ids: list[str], *, config: Path | None) -> None:
    """`agent kb delete ID...`: all of them, or none when one is not there (exit 1)."""
    with opened_store(load_settings(config)) as store:
        missing = [i for i in article_ids if help_articles.get(store, i) is None]
        if missing:
            raise ArticleNotFound(
                f"No article {missing[0]!r}; nothing was deleted (see 'agent kb list')"
            )
        deleted = help_articles.delete_articles(store, article_ids)
    print(f"Deleted {len(deleted)} article(s): {', '.join(deleted)}")


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
