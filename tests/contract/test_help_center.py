"""The help centre: articles imported from Markdown (re-importing updates), listed, shown and
searched the same on both backends (English and Japanese), the tools a model uses, and an
answer citing an article this run did not retrieve refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.core.decisions import CallTool, Step
from agent_cli.domain.records import Article
from agent_cli.policy.grounding import ground_answer
from agent_cli.store import help_articles
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools import ToolRegistry
from agent_cli.tools.help_center import help_tools
from agent_cli.tools.offered import narrowed, offer

runner = CliRunner()


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("How long does shipping take to Osaka?", "shipping-times"),
        ("Can I return an opened item?", "returns-opened-items"),
        ("When will my refund arrive on PayPal?", "refund-methods"),
        ("Is my camera under warranty?", "warranty"),
        ("Which payment methods do you take?", "payment-methods"),
        ("I want to talk to a person", "contact-a-person"),
        ("大阪まで配送は何日かかりますか", "shipping-times"),
        ("開封した商品は返品できますか", "returns-opened-items"),
        ("保証はありますか", "warranty"),
        ("支払い方法は？", "payment-methods"),
    ],
)
def test_the_sample_help_centre_answers_each_topic_first(
    either_store: OrderStore, question: str, first: str
) -> None:
    hits = help_articles.search(either_store, question)
    assert hits and hits[0].id == first, [h.id for h in hits]


def test_a_search_finds_nothing_for_nothing(either_store: OrderStore) -> None:
    assert help_articles.search(either_store, "zzzz qqqq") == []
    assert help_articles.search(either_store, "the and of ?") == []  # only common words
    assert help_articles.search(either_store, "'; DROP TABLE articles; --\" OR ") == []


def test_the_best_passage_is_the_one_that_matched(either_store: OrderStore) -> None:
    (hit, *_) = help_articles.search(either_store, "delivery days to Hokkaido")
    assert hit.id == "shipping-times" and "Hokkaido" in hit.passage
    assert not hit.passage.startswith("Orders leave")  # the first paragraph does not mention it


def test_reimporting_updates_by_id_on_both_backends(either_store: OrderStore) -> None:
    changed = Article("warranty", "Warranty, extended", "Everything carries 3 years now.")
    help_articles.save_articles(either_store, [changed, Article("pets", "Pets", "No pets.")])
    found = help_articles.get(either_store, "warranty")
    assert found is not None and found.title == "Warranty, extended"
    assert [h.id for h in help_articles.search(either_store, "carries years")] == ["warranty"]
    assert help_articles.search(either_store, "cameras earbuds") == []  # the old text is gone
    assert len(help_articles.listed(either_store)) == 7


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "help"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_kb_import_list_show_and_search_from_the_command_line(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path,
        {"gift-wrap.md": "# Gift wrapping\n\nWe wrap any order for 300 JPY.\n",
         "shipping-times.md": "# Shipping times\n\nEverything arrives tomorrow.\n"},
    )  # fmt: skip
    done = runner.invoke(app, ["kb", "import", str(folder)])
    assert done.exit_code == 0 and done.stdout == "Imported 2 article(s): 1 new, 1 updated\n"
    listed = [
        json.loads(x) for x in runner.invoke(app, ["kb", "list", "--json"]).stdout.splitlines()
    ]
    assert [a["id"] for a in listed][:3] == ["contact-a-person", "gift-wrap", "payment-methods"]
    shown = runner.invoke(app, ["kb", "show", "gift-wrap"])
    assert shown.stdout.startswith("[gift-wrap] Gift wrapping\n") and "300 JPY" in shown.stdout
    found = runner.invoke(app, ["kb", "search", "wrapping", "--json"])
    assert json.loads(found.stdout.splitlines()[0])["id"] == "gift-wrap"
    missing = runner.invoke(app, ["kb", "show", "nope"])
    assert missing.exit_code == 1 and "No article 'nope'" in missing.stderr


@pytest.mark.parametrize(
    ("files", "said"),
    [
        ({"Gift Wrap.md": "# Gift\n"}, "the file name makes the article's id"),
        ({"gift.md": "Just text, no heading.\n"}, "the first line must be a heading"),
        ({"gift.md": "# Gift\x00\n"}, "holds a NUL character"),
        ({"notes.txt": "# Notes\n"}, "no Markdown (.md) files in it"),
    ],
)
def test_a_bad_article_file_is_one_line_and_nothing_is_imported(
    tmp_path: Path, files: dict[str, str], said: str
) -> None:
    folder = _folder(tmp_path, {"good-one.md": "# Good\n\nFine.\n", **files})
    if "notes.txt" in files:
        (folder / "good-one.md").unlink()
    result = runner.invoke(app, ["kb", "import", str(folder)])
    assert result.exit_code == 2 and said in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1
    listed = runner.invoke(app, ["kb", "list", "--json"]).stdout.splitlines()
    ids = [json.loads(x)["id"] for x in listed]
    assert "good-one" not in ids


def test_the_tools_search_and_read_and_are_offered_for_help_questions(
    either_store: OrderStore,
) -> None:
    tools = ToolRegistry(help_tools(lambda: either_store))
    found = tools.invoke("search_help", {"query": "How long does shipping take to Osaka?"})
    assert found.text.startswith('[shipping-times] "Shipping times by region": "Delivery takes')
    whole = tools.invoke("get_article", {"article_id": "warranty"})
    assert whole.text.startswith('[warranty] "Warranty"\n"Appliances')
    none = tools.invoke("search_help", {"query": "zzzz"})
    assert none.is_error and "no help article matches" in none.text
    names = ("lookup_order", "search_help", "get_article", "track_order")
    assert "search_help" in narrowed(names, ["How long does shipping take?"])
    assert "search_help" in narrowed(names, ["保証はありますか"])
    assert "search_help" in offer(names, "phase", ["Is order A100 refundable?"])()


def _searched(*ids: str) -> tuple[Step, ...]:
    """A search that found these articles, as the tool returns it: its lines and its record."""
    text = "\n".join(f'[{i}] "{i}": "..."' for i in ids)
    hits = {"hits": [{"id": i, "title": i, "passage": "..."} for i in ids]}
    call = CallTool(tool="search_help", args={"query": "q"})
    return (Step(1, call, text, False, record=hits),)


SEARCHED = _searched("shipping-times")


@pytest.mark.parametrize(
    ("answer", "history", "refused"),
    [
        ("Delivery to Osaka takes 2-3 business days [shipping-times].", SEARCHED, None),
        ("Opened items can be returned [returns-opened-items].", SEARCHED, "returns-opened-items"),
        ("Delivery takes 2-3 days [shipping-times].", (), "shipping-times"),
        (  # a search's second and third results are retrieved as much as its first
            "Refunds go back to your card [refund-methods]; see also [warranty].",
            _searched("shipping-times", "refund-methods", "warranty"),
            None,
        ),
        (
            "It takes 2-3 days [shipping-times].",
            (Step(1, CallTool(tool="search_help", args={}), "ERROR: [shipping-times]", True),),
            "shipping-times",
        ),
    ],
)
def test_an_answer_cites_only_articles_this_run_retrieved(
    answer: str, history: tuple[Step, ...], refused: str | None
) -> None:
    problem = ground_answer(answer, history)
    if refused is None:
        assert problem is None
    else:
        assert problem is not None and f"cites [{refused}]" in problem


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        ("How long does shipping take?", ["ship"]),  # common words out, the ending off
        ("shipped parcels", ["ship", "parcel"]),
        ("deliveries and warranties", ["delivery", "warranty"]),
        ("boxes, watches and glasses", ["box", "watch", "glass"]),
        ("address status bus", ["address", "status", "bus"]),  # no "s" taken off these
        ("filled called", ["fill", "call"]),  # a doubled l stays
        ("大阪まで配送は何日", ["大阪", "配送", "何日"]),
        ("I 2 a", ["2"]),  # one letter is no term; a digit is
    ],
)
def test_a_question_s_search_terms(question: str, wanted: list[str]) -> None:
    assert help_articles.terms(question) == wanted


def test_a_long_passage_is_cut_with_a_mark() -> None:
    body = "word " * 200
    cut = help_articles.passage(body, ["word"], limit=50)
    assert len(cut) == 50 and cut.endswith("…") and not cut[:-1].endswith(" ")
    assert help_articles.passage("short one", ["short"], limit=50) == "short one"


def test_one_file_imports_alone_and_counts_what_is_new(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path,
        {"a-new.md": "\n# First\nLine one.\nLine two.\n", "b-new.md": "# Second\n\nText.\n",
         "warranty.md": "# Warranty again\n\nThree years.\n"},
    )  # fmt: skip
    done = runner.invoke(app, ["kb", "import", str(folder)])
    assert done.stdout == "Imported 3 article(s): 2 new, 1 updated\n", done.output
    shown = json.loads(runner.invoke(app, ["kb", "show", "a-new", "--json"]).stdout)
    assert shown["title"] == "First" and shown["body"] == "Line one.\nLine two."
    single = runner.invoke(app, ["kb", "import", str(folder / "b-new.md")])
    assert single.stdout == "Imported 1 article(s): 0 new, 1 updated\n"
    other = tmp_path / "notes.txt"
    other.write_text("# Notes\n")
    refused = runner.invoke(app, ["kb", "import", str(other)])
    assert refused.exit_code == 2 and "not a Markdown file (.md)" in refused.stderr
    nested = tmp_path / "nested"
    (nested / "sub").mkdir(parents=True)
    (nested / "dup.md").write_text("# A\n")
    (nested / "sub" / "dup.md").write_text("# B\n")
    twice = runner.invoke(app, ["kb", "import", str(nested)])
    assert twice.exit_code == 2 and "a second article with the id 'dup'" in twice.stderr


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("How long does shipping take to Osaka?", "2-3 business days to Osaka"),
        (
            "大阪まで配送は何日かかりますか？",
            "大阪・京都・名古屋など本州のその他の地域は2〜3営業日",
        ),
        ("Can I return an opened item?", "opened or not"),
    ],
)
def test_offline_a_question_about_no_order_is_answered_from_the_help_centre_cited(
    question: str, answer: str
) -> None:
    result = runner.invoke(app, ["ask", question, "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    called = [e["tool"] for e in events if e["event"] == "observation"]
    assert called == ["search_help"]
    final = events[-1]["answer"]
    assert answer in final and final.endswith("]") and "[" in final


def test_offline_a_help_centre_with_no_answer_says_so_and_what_it_can_do() -> None:
    store = OrderStore.open(Path(os.environ["AGENT_DB"]))
    store.atomically(lambda: store.execute("DELETE FROM articles"))
    store.close()
    result = runner.invoke(app, ["ask", "How long does shipping take to Osaka?", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "could not find an answer to that in our help articles" in result.stdout
    assert "pass you to a person" in result.stdout and "refundable" not in result.stdout


def test_delete_and_replace_leave_only_what_the_shop_keeps_on_both_backends(
    either_store: OrderStore,
) -> None:
    sample = {a.id for a in help_articles.listed(either_store)}
    assert "warranty" in sample and len(sample) == 6
    assert help_articles.delete_articles(either_store, ["WARRANTY", "nothing-here"]) == ["warranty"]
    assert help_articles.get(either_store, "warranty") is None
    assert all(hit.id != "warranty" for hit in help_articles.search(either_store, "warranty"))
    ours = [Article("gift-wrap", "Gift wrap", "We wrap gifts for 300 JPY.")]
    help_articles.save_articles(either_store, ours, replace=True)
    assert [a.id for a in help_articles.listed(either_store)] == ["gift-wrap"]
    assert [h.id for h in help_articles.search(either_store, "shipping times Osaka")] == []
    assert [h.id for h in help_articles.search(either_store, "wrap a gift")] == ["gift-wrap"]


def test_kb_delete_and_import_replace_from_the_command_line(tmp_path: Path) -> None:
    folder = tmp_path / "help"
    folder.mkdir()
    (folder / "gift-wrap.md").write_text("# Gift wrap\n\nWe wrap gifts for 300 JPY.\n")
    missing = runner.invoke(app, ["kb", "delete", "warranty", "no-such-article"])
    assert missing.exit_code == 1 and "No article 'no-such-article'; nothing was deleted" in (
        missing.stderr
    )
    assert "warranty" in runner.invoke(app, ["kb", "list"]).stdout  # all or none
    deleted = runner.invoke(app, ["kb", "delete", "warranty"])
    assert deleted.exit_code == 0 and deleted.stdout.strip() == "Deleted 1 article(s): warranty"
    replaced = runner.invoke(app, ["kb", "import", str(folder), "--replace"])
    assert replaced.exit_code == 0, replaced.stderr
    assert replaced.stdout.strip() == "Imported 1 article(s): 1 new, 0 updated, 5 removed"
    listed = [
        json.loads(line)["id"]
        for line in runner.invoke(app, ["kb", "list", "--json"]).stdout.splitlines()
    ]
    assert listed == ["gift-wrap"]
