"""The intent model (issue 49, point 2): one statistical reading of every customer message, in
English and Japanese, measured on a held-out part of its corpus it never trains on, honest
when unsure, cached on disk, and open to a shop's own labelled examples."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cli.domain.intents import NAMES, UNKNOWN
from agent_cli.errors import ConfigError
from agent_cli.language import intent_cache, intent_corpus, intents
from agent_cli.language.intent_model import IntentModel, features, normalise
from agent_cli.language.intent_scores import held_out, score

# The floor the held-out accuracy must not drop below, per language (an `unknown` reading counts
# as wrong). Measured 89.3% (English) and 90.4% (Japanese) when set; issue 49 asks for 95%,
# which this corpus and model do not reach yet (benchmarks/intents.py prints the figures).
FLOOR = {"en": 0.87, "ja": 0.88}


@pytest.fixture(scope="module")
def corpus() -> list[intent_corpus.Example]:
    return intent_corpus.builtin()


@pytest.fixture(scope="module")
def model(corpus: list[intent_corpus.Example]) -> IntentModel:
    return IntentModel.trained_on(intent_corpus.learnt(corpus))


@pytest.mark.parametrize("language", intent_corpus.LANGUAGES)
def test_held_out_accuracy_stays_above_its_floor(
    model: IntentModel, corpus: list[intent_corpus.Example], language: str
) -> None:
    scores = score(model, held_out(corpus, language))
    assert scores.total >= 300
    assert scores.accuracy >= FLOOR[language], scores.confusion.most_common(10)
    assert scores.macro_f1 >= FLOOR[language]


@pytest.mark.parametrize("language", intent_corpus.LANGUAGES)
def test_the_corpus_has_sixty_examples_of_every_intent_in_each_language(
    corpus: list[intent_corpus.Example], language: str
) -> None:
    counts = Counter(e.intent for e in corpus if e.language == language)
    assert {name: counts[name] for name in NAMES if counts[name] < 60} == {}
    held = Counter(e.intent for e in corpus if e.language == language and e.held_out)
    assert all(held[name] >= 10 for name in NAMES), held  # every intent is measured


def test_no_line_is_both_trained_on_and_held_out(corpus: list[intent_corpus.Example]) -> None:
    trained = {e.text for e in corpus if not e.held_out}
    assert not trained & {e.text for e in corpus if e.held_out}
    assert len({e.text for e in corpus}) == len(corpus)  # no line written twice


def test_the_model_never_learns_a_held_out_line() -> None:
    lines = [
        intent_corpus.Example("please cancel it", "cancel", "en", held_out=False),
        intent_corpus.Example("zebracrossing refund", "refund", "en", held_out=True),
    ]
    model = IntentModel.trained_on((e.text, e.intent) for e in lines if not e.held_out)
    assert "w:zebracrossing" not in model.state()["rows"]  # type: ignore[operator]
    assert model.intents == ("cancel",)


@pytest.mark.parametrize(
    ("message", "intent"),
    [
        ("Is order A100 refundable?", "refund"),
        ("Where is my order A101?", "status"),
        ("Please cancel B200", "cancel"),
        ("B200をキャンセルしてください", "cancel"),
        ("Can I talk to a human?", "handover"),
        ("How long does shipping take to Osaka?", "help"),
        ("I don't have my order number, it's under sato@example.com", "orders"),
        ("Where is my refund for A104?", "refund_status"),
        ("A104の返金はどうなっていますか？", "refund_status"),
        ("Please change my default address to 1-1 Marunouchi", "account_address"),
        ("Please ship B200 to 4-5-6 Umeda, Osaka", "address"),
        ("ありがとうございました", "greeting"),
    ],
)
def test_the_readme_questions_read_as_their_intent(
    model: IntentModel, message: str, intent: str
) -> None:
    assert model.read(message).intent == intent


@pytest.mark.parametrize("message", ["", "   ", "A100", "B200?", "xyzzy plugh frobnicate"])
def test_a_message_it_cannot_read_is_unknown_not_a_guess(model: IntentModel, message: str) -> None:
    reading = model.read(message)
    assert reading.intent == UNKNOWN
    assert not reading.sure


def test_probabilities_cover_every_intent_and_sum_to_one(model: IntentModel) -> None:
    reading = model.read("I want to return the mug from A100")
    assert set(reading.probabilities) == set(NAMES)
    assert sum(reading.probabilities.values()) == pytest.approx(1.0)
    assert reading.likely(0.0)[0] == reading.top() == "return"
    assert reading.probability == max(reading.probabilities.values())


def test_codes_emails_and_digits_are_folded_so_the_model_learns_words(model: IntentModel) -> None:
    assert normalise("Cancel B200") == normalise("cancel #W2378156") == "cancel #code"
    assert normalise("mail ME at Sato.Y+1@example.co.jp") == "mail me at @mail"
    assert normalise("ＡＢ１２３") == "#code"  # full-width, folded first
    assert normalise("zip 100-0005") == "zip 0-0"
    assert model.read("cancel Z999").intent == model.read("cancel #W1111111").intent == "cancel"


def test_features_hold_japanese_grams_and_english_words() -> None:
    grams = features("返品したい please")
    assert {"返品", "返品し", "w:please", "p:返品したい please"} <= grams


def test_training_is_deterministic(corpus: list[intent_corpus.Example]) -> None:
    first = IntentModel.trained_on(intent_corpus.learnt(corpus))
    again = IntentModel.trained_on(reversed(intent_corpus.learnt(corpus)))
    assert json.dumps(first.state(), sort_keys=True) == json.dumps(again.state(), sort_keys=True)


def test_an_email_added_to_a_message_does_not_change_its_intent(model: IntentModel) -> None:
    for question, intent in [
        ("Where is my order A101?", "status"),
        ("Please cancel B200", "cancel"),
        ("B200の支払い方法をPayPalに変更したいです。", "payment"),
    ]:
        assert model.read(f"{question} My email is aoi.suzuki@example.com").intent == intent
        assert model.read(f"{question} aoi.suzuki@example.com").intent == intent


@pytest.mark.parametrize("held", [True, False])
def test_only_lines_learnt_are_learnt_again_with_an_email(held: bool) -> None:
    lines = [intent_corpus.Example(f"line {n}", "cancel", "en", held_out=held) for n in range(30)]
    added = intent_corpus.with_who(lines)[30:]
    learnt = intent_corpus.learnt(lines)
    if held:
        assert added == [] and learnt == []
    else:
        assert 5 <= len(added) <= 20 and all("@example.com" in e.text for e in added)
        assert len(learnt) == 30 + len(added)


def test_a_model_of_no_examples_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one example"):
        IntentModel.trained_on([])


# The cache


def _counting_trainer(model: IntentModel) -> tuple[list[int], Callable[[], IntentModel]]:
    calls: list[int] = []

    def train() -> IntentModel:
        calls.append(1)
        return model

    return calls, train


def test_the_cache_trains_once_and_reads_the_same_model(tmp_path: Path, model: IntentModel) -> None:
    calls, train = _counting_trainer(model)
    first = intent_cache.load_or_train([b"corpus"], train, tmp_path)
    again = intent_cache.load_or_train([b"corpus"], train, tmp_path)
    assert calls == [1]
    assert again is not first and again.state() == first.state()
    assert again.read("Please cancel B200").intent == "cancel"


def test_new_examples_train_a_new_model(tmp_path: Path, model: IntentModel) -> None:
    calls, train = _counting_trainer(model)
    intent_cache.load_or_train([b"corpus"], train, tmp_path)
    intent_cache.load_or_train([b"corpus", b"[cancel]\nkill it"], train, tmp_path)
    assert calls == [1, 1]


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[: len(raw) // 2],  # half written
        lambda raw: raw.replace(b'"cancel"', b'"cancer"', 1),  # a changed byte
        lambda raw: b"not a model at all",
        lambda raw: b"",
    ],
)
def test_a_damaged_cache_is_trained_again_never_read(
    tmp_path: Path, model: IntentModel, damage: object
) -> None:
    calls, train = _counting_trainer(model)
    intent_cache.load_or_train([b"c"], train, tmp_path)
    (path,) = tmp_path.glob("intents-*.json")
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    reread = intent_cache.load_or_train([b"c"], train, tmp_path)
    assert calls == [1, 1]
    assert reread.read("Please cancel B200").intent == "cancel"


def test_a_forged_model_with_a_right_checksum_is_still_checked(tmp_path: Path) -> None:
    calls, train = _counting_trainer(IntentModel.trained_on([("cancel it", "cancel")]))
    intent_cache.load_or_train([b"c"], train, tmp_path)
    (path,) = tmp_path.glob("intents-*.json")
    body = json.dumps({"intents": ["steal"], "base": [0], "unseen": [0], "rows": {}}).encode()
    path.write_bytes(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    intent_cache.load_or_train([b"c"], train, tmp_path)
    assert calls == [1, 1]


def test_a_folder_that_cannot_be_written_still_gives_a_model(
    tmp_path: Path, model: IntentModel
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder should be")
    calls, train = _counting_trainer(model)
    got = intent_cache.load_or_train([b"c"], train, blocked / "cache")
    assert got is model and calls == [1]


def test_the_cache_keeps_only_the_newest_few_models(tmp_path: Path, model: IntentModel) -> None:
    calls, train = _counting_trainer(model)
    for n in range(7):
        intent_cache.load_or_train([bytes([n])], train, tmp_path)
    assert calls == [1] * 7
    assert len(list(tmp_path.glob("intents-*.json"))) == 4
    assert not list(tmp_path.glob(".intents*"))  # no temporary file left behind


# A shop's own examples


def test_a_shops_examples_teach_the_model_its_own_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = tmp_path / "intents.txt"
    examples.write_text(
        "# our customers say 'zap' for cancel\n[cancel]\n"
        + "".join(
            f"zap order {n}\nplease zap my order number {n}\nzap it {n}\n" for n in range(30)
        ),
        encoding="utf-8",
    )
    before = intents.model_for(None).read("zap zap zap")
    assert before.intent != "cancel"
    intents.use_examples(examples)
    try:
        assert intents.read("zap zap zap").intent == "cancel"
        assert intents.read("Where is my order A101?").intent == "status"  # the corpus still holds
    finally:
        intents.use_examples(None)
    assert intents.read("zap zap zap").intent == before.intent


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "[refunds]\nmoney back\n",
            r"intents\.txt:1: unknown intent \[refunds\]; use one of: refund",
        ),
        ("money back\n", r"intents\.txt:1: a message before any \[intent\] line"),
        ("# note\n\n[cancel]\nok\n[nope]\n", r"intents\.txt:5: unknown intent \[nope\]"),
    ],
)
def test_a_bad_examples_file_is_named_with_its_line(
    tmp_path: Path, text: str, problem: str
) -> None:
    examples = tmp_path / "intents.txt"
    examples.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=problem):
        intents.use_examples(examples)


def test_an_examples_file_that_is_missing_or_not_text_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read the intent examples .*missing\.txt"):
        intents.use_examples(tmp_path / "missing.txt")
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"[cancel]\n\xff\xfe")
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        intents.use_examples(binary)


def test_a_shops_examples_are_read_in_their_own_language(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    raw = "[cancel]\nキャンセルして\ncancel it\n".encode()
    found = intent_corpus.shop_examples(path, raw)
    assert [(e.language, e.held_out) for e in found] == [("ja", False), ("en", False)]
