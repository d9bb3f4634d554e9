"""The shop's help centre in the order store: articles (an id, a title, Markdown text) found by
full-text search, FTS5 on SQLite and `tsvector` on PostgreSQL, over the same words.

Both backends search a `words` text made here: each word of Latin, Greek or Cyrillic script
lower-cased, and each pair of neighbouring kanji or katakana (Japanese and Chinese are written
without spaces; a pair matches most words of two or more characters, and the hiragana between
them, particles and endings, are left out). A question is made into
the same terms, its common words left out, and an article matches on any of them, best first.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from agent_cli.domain.records import Article
from agent_cli.store.bulk_writes import DeskStore

ARTICLE_ID = r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$"  # a file name's stem: shipping-times
MAX_TERMS = 24
_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_KANJI_KATAKANA = re.compile(r"[\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
_COMMON = (
    "a an the and or of to in on for with is are was be it its this that my your our i you we "
    "do does did can could how what when where which who why will would should me us at by "
    "from as if about any have has had not no please there their they them long take takes "
    "get much many does"
)
_STOP = frozenset(_COMMON.split(" "))


@dataclass(frozen=True, slots=True)
class Hit:
    """An article a search found: what a reader needs to choose it, and the passage that
    matched best."""

    id: str
    title: str
    passage: str


def _tokens(text: str, *, common: bool = True) -> list[str]:
    """Every word of a text, lower-cased and stemmed (the common ones too, unless `common` is
    false), with Japanese and Chinese runs as character pairs."""
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if not common and word in _STOP:
            continue
        if _CJK.match(word):  # kanji and katakana runs; hiragana (particles, endings) between
            for run in _KANJI_KATAKANA.findall(word):
                out += ["".join(pair) for pair in itertools.pairwise(run)] or [run]
        else:
            out.append(_stem(word))
    return out


def _stem(word: str) -> str:
    """English endings taken off, so "shipping" finds "ship" and "returns" "return"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for ending in ("ing", "ed"):
        if len(word) > len(ending) + 2 and word.endswith(ending):
            stem = word[: -len(ending)]
            return stem[:-1] if stem[-1] == stem[-2] and stem[-1] not in "lsz" else stem
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """The search terms of a question: its tokens, common words left out, each once, the
    first MAX_TERMS."""
    kept = [t for t in _tokens(text, common=False) if len(t) > 1 or t.isdigit() or _CJK.match(t)]
    return list(dict.fromkeys(kept))[:MAX_TERMS]


def _words(article: Article) -> str:
    """What the full-text index holds of an article: every token of its title and text."""
    return " ".join(_tokens(f"{article.title}\n{article.body}"))


def write_articles(store: DeskStore, articles: Iterable[Article]) -> int:
    """Add or replace articles by id, in the caller's transaction; how many."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    count = 0
    for article in articles:
        store.execute("DELETE FROM articles WHERE id = ?", (article.id,))
        store.execute(
            "INSERT INTO articles (id, title, body, words, updated_at) VALUES (?, ?, ?, ?, ?)",
            (article.id, article.title, article.body, _words(article), article.updated_at or now),
        )
        if store.FULL_TEXT == "fts5":
            store.execute("DELETE FROM articles_fts WHERE id = ?", (article.id,))
            store.execute(
                "INSERT INTO articles_fts (id, words) VALUES (?, ?)", (article.id, _words(article))
            )
        count += 1
    return count


def save_articles(store: DeskStore, articles: list[Article], *, replace: bool = False) -> int:
    """`write_articles` in a transaction of its own: all of them, or none. `replace`: every
    other article goes, in the same transaction (the shop's help centre is these alone)."""

    def work() -> int:
        if replace:
            delete_articles_locked(store, [a.id for a in listed(store)])
        return write_articles(store, articles)

    return store.atomically(work)


def delete_articles(store: DeskStore, ids: list[str]) -> list[str]:
    """Remove these articles, all in one transaction; the ids that were there."""
    return store.atomically(lambda: delete_articles_locked(store, ids))


def delete_articles_locked(store: DeskStore, ids: list[str]) -> list[str]:
    """`delete_articles` in the caller's transaction."""
    there = [i for i in dict.fromkeys(i.lower() for i in ids) if get(store, i) is not None]
    for article_id in there:
        store.execute("DELETE FROM articles WHERE id = ?", (article_id,))
        if store.FULL_TEXT == "fts5":
            store.execute("DELETE FROM articles_fts WHERE id = ?", (article_id,))
    return there


def listed(store: DeskStore) -> list[Article]:
    rows = store.query("SELECT id, title, body, updated_at FROM articles ORDER BY id")
    return [Article(*map(str, row)) for row in rows]


def get(store: DeskStore, article_id: str) -> Article | None:
    rows = store.query(
        "SELECT id, title, body, updated_at FROM articles WHERE id = ?", (article_id.lower(),)
    )
    return Article(*map(str, rows[0])) if rows else None


def search(store: DeskStore, text: str, limit: int = 3) -> list[Hit]:
    """The articles that best match `text`, best first (ties by id)."""
    wanted = terms(text)
    if not wanted:
        return []
    if store.FULL_TEXT == "fts5":
        rows = store.query(
            "SELECT a.id, a.title, a.body FROM articles_fts JOIN articles a ON a.id ="
            " articles_fts.id WHERE articles_fts MATCH ? ORDER BY bm25(articles_fts), a.id"
            " LIMIT ?",
            (" OR ".join(f'"{t}"' for t in wanted), limit),
        )
    else:
        rows = store.query(
            "SELECT id, title, body FROM articles, to_tsquery('simple', ?) q WHERE"
            " to_tsvector('simple', words) @@ q ORDER BY"
            " ts_rank(to_tsvector('simple', words), q) DESC, id LIMIT ?",
            (" | ".join(f"'{t}'" for t in wanted), limit),
        )
    return [Hit(str(i), str(title), passage(str(body), wanted)) for i, title, body in rows]


def passage(body: str, wanted: list[str], limit: int = 300) -> str:
    """The paragraph holding most of the terms (the first of equals), cut to `limit`."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", body) if p.strip()]
    if not paragraphs:
        return ""

    def score(paragraph: str) -> int:
        have = set(_tokens(paragraph))
        return sum(term in have for term in wanted)

    best = max(paragraphs, key=score)  # max keeps the first of equals
    flat = " ".join(best.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
