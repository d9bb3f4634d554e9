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

from agent_cli.domain.intents import NAMES, UNKNOWN, Intent
from agent_cli.errors import ConfigError
from agent_cli.language import intent_cache, intent_corpus, intents
from agent_cli.language.intent_model import IntentModel, features, normalise
from agent_cli.language.intent_scores import held_out, score

# The floor the held-out accuracy must not drop below, per language (an `unknown` reading counts
# as wrong). Measured 94.8% (English) and 95.7% (Japanese) when last set (the regression mixed
# with naive Bayes), 94.2% and 94.2% in a 4-fold cross-validation of the lines learnt; issue 49
# asks for 95% in both, which English does not reach yet (benchmarks/intents.py prints them).
FLOOR = {"en": 0.94, "ja": 0.95}


@pytest.fixture(scope="module")
def corpus() -> list[intent_corpus.Example]:
    return intent_corpus.builtin()


@pytest.fixture(scope="module")
def model() -> IntentModel:
    """The model the package ships (trained on its corpus by scripts/train_intents.py)."""
    return intents.model_for(None)


def small(lines: int = 40) -> list[tuple[str, Intent]]:
    """A corpus small enough to train in a test: the first lines of each intent, both languages."""
    seen: Counter[tuple[str, str]] = Counter()
    picked: list[tuple[str, Intent]] = []
    for e in intent_corpus.builtin():
        if not e.held_out and seen[(e.language, e.intent)] < lines:
            seen[(e.language, e.intent)] += 1
            picked.append((e.text, e.intent))
    return picked


def test_the_shipped_model_is_what_the_code_trains_from_the_corpus(
    corpus: list[intent_corpus.Example], model: IntentModel
) -> None:
    """A change of the training that forgot VERSION and `scripts/train_intents.py` fails here
    (about 13 s: the one full training of the suite)."""
    trained = IntentModel.trained_on(intent_corpus.learnt(corpus))
    assert trained.state() == model.state(), "run python scripts/train_intents.py"


def test_the_shipped_model_is_the_model_of_the_corpus_and_settings() -> None:
    """A corpus or a setting changed without `python scripts/train_intents.py` fails here."""
    shipped = intents.shipped_folder()
    name = intent_cache.file_name(intent_corpus.builtin_files())
    assert [p.name for p in shipped.glob("intents-*.json")] == [name], (
        "the shipped intent model is not the corpus's: run python scripts/train_intents.py"
    )


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
        intent_corpus.Example("where is it", "status", "en", held_out=False),
        intent_corpus.Example("zebracrossing refund", "refund", "en", held_out=True),
    ]
    model = IntentModel.trained_on((e.text, e.intent) for e in lines if not e.held_out)
    rows = rows_of(model.state())
    assert "w:cancel" in rows and "w:zebracrossing" not in rows
    assert model.intents == ("status", "cancel")


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


@pytest.mark.parametrize(
    "message", ["", "   ", "A100", "B200?", "#W1234567 sato@example.com", "12345"]
)
def test_a_message_that_asks_nothing_is_unknown_not_a_guess(
    model: IntentModel, message: str
) -> None:
    reading = model.read(message)
    assert reading.intent == UNKNOWN
    assert not reading.sure


@pytest.mark.parametrize("message", ["xyzzy plugh frobnicate", "asdf", "???", "lorem ipsum"])
def test_gibberish_is_never_read_as_a_request_to_the_shop(model: IntentModel, message: str) -> None:
    assert model.read(message).intent in {UNKNOWN, "other"}


def test_a_reading_below_the_bar_is_unknown_with_its_best_guess_kept() -> None:
    from agent_cli.language import intent_model

    model = IntentModel.trained_on([("cancel it", "cancel"), ("where is it", "status")] * 3)
    reading = model.read("cancel is")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(intent_model, "THRESHOLD", reading.probability + 0.01)
        unsure = model.read("cancel is")
        patch.setattr(intent_model, "THRESHOLD", reading.probability)
        sure = model.read("cancel is")
    assert (unsure.intent, unsure.top()) == (UNKNOWN, reading.top())
    assert sure.intent == reading.top()


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
    # inside Japanese too: no word boundary falls between a digit and kana, and the letter of a
    # code must not tell the samples' delivered A-orders from their pending B-orders
    assert normalise("A101は？") == normalise("B200は？") == "#code は?"
    assert normalise("注文#W2378156の件") == "注文 #code の件"
    assert model.read("cancel Z999").intent == model.read("cancel #W1111111").intent == "cancel"


def test_features_hold_japanese_grams_and_english_words() -> None:
    grams = features("返品したい please")
    assert {"返品", "返品し", "w:please", "p:返品したい please"} <= grams


def test_training_is_deterministic_whatever_the_order_of_the_examples() -> None:
    lines = small(8)
    first = IntentModel.trained_on(lines)
    again = IntentModel.trained_on(reversed(lines))
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


def test_a_shipped_model_is_read_before_the_cache_and_never_trained(
    tmp_path: Path, model: IntentModel
) -> None:
    shipped, cache = tmp_path / "shipped", tmp_path / "cache"
    shipped.mkdir()
    intent_cache.ship([b"corpus"], model, shipped)
    calls, train = _counting_trainer(IntentModel.trained_on([("x", "cancel"), ("y", "status")]))
    got = intent_cache.load_or_train([b"corpus"], train, cache, shipped=shipped)
    assert calls == [] and not cache.exists()
    assert got.state() == model.state()
    intent_cache.load_or_train([b"corpus", b"shop"], train, cache, shipped=shipped)
    assert calls == [1] and len(list(cache.glob("intents-*.json"))) == 1  # a shop's: trained


def test_shipping_a_model_leaves_it_alone_in_its_folder(tmp_path: Path, model: IntentModel) -> None:
    intent_cache.ship([b"old"], model, tmp_path)
    path = intent_cache.ship([b"new"], model, tmp_path)
    assert list(tmp_path.glob("intents-*.json")) == [path]
    assert path.stat().st_mode & 0o777 == 0o644


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
    body = json.dumps({"intents": ["steal"], "bias": [0], "rows": {}}).encode()
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


# Pins from mutation testing (tests/mutate.sh on language/): the arithmetic, the edges.


def rows_of(state: dict[str, object]) -> dict[str, str]:
    """A model's rows by feature, as its state keeps them."""
    rows = state["rows"]
    assert isinstance(rows, dict)
    return rows


def test_the_arithmetic_by_hand() -> None:
    """Two intents, three messages: each row holds its feature's idf, log((1 + n) / (1 + df))
    + 1, the weights that survived pruning, and how many messages of each intent hold it. The
    regression's reading is the softmax of the bias plus each known feature's weight times its
    idf over the message's length (the idfs' norm); naive Bayes's, the softmax of each intent's
    log prior plus, for each known feature, the log of its count plus alpha over the intent's
    feature total plus alpha times the vocabulary; a reading mixes them, NB_WEIGHT of the second."""
    import math

    from agent_cli.language.intent_model import PRUNE

    lines = [("zap", "cancel"), ("zap", "cancel"), ("zip", "status")]
    model = IntentModel.trained_on(lines)
    state = model.state()
    assert state["intents"] == ["status", "cancel"]  # the table's order
    rows = rows_of(state)
    idf_of = {gram: float(row.partition("|")[0]) for gram, row in rows.items()}
    assert idf_of["w:zap"] == pytest.approx(math.log(4 / 3) + 1, abs=1e-4)
    assert idf_of["w:zip"] == pytest.approx(math.log(4 / 2) + 1, abs=1e-4)
    weights = {
        gram: {
            int(k): float(w) for k, _, w in (p.partition(":") for p in row.split("|")[1].split())
        }
        for gram, row in rows.items()
    }
    assert all(abs(w) >= PRUNE for row in weights.values() for w in row.values())
    assert weights["w:zap"][1] > 0 > weights["w:zip"][1]  # a word of cancel's raises cancel
    counts = {
        gram: {int(k): int(n) for k, _, n in (p.partition(":") for p in row.split("|")[2].split())}
        for gram, row in rows.items()
    }
    assert counts["w:zap"] == {1: 2} and counts["w:zip"] == {0: 1}
    # "p" is a message naive Bayes is unsure of (about 1 in 3), not only the words it learnt
    for message in ("zap", "zap zip", "p", "zi"):
        cancel = model.read(message).probabilities["cancel"]
        assert cancel == pytest.approx(read_by_hand(model, lines, message), abs=1e-4), message
    assert model.read("zap").intent == "cancel" and model.read("zip").intent == "status"


def read_by_hand(model: IntentModel, lines: list[tuple[str, str]], message: str) -> float:
    """The probability of the second intent of a two-intent model, computed from its state and
    the lines it learnt as the model's docstring says (regression and naive Bayes, mixed)."""
    import math

    from agent_cli.language.intent_model import NB_ALPHA, NB_WEIGHT, features

    state = model.state()
    rows = rows_of(state)
    idf_of = {gram: float(row.partition("|")[0]) for gram, row in rows.items()}
    weights, counts = (
        {
            gram: {
                int(k): float(n)
                for k, _, n in (p.partition(":") for p in row.split("|")[part].split())
            }
            for gram, row in rows.items()
        }
        for part in (1, 2)
    )
    intents = list(model.intents)
    totals = [sum(len(features(t)) for t, i in lines if i == name) for name in intents]
    priors = [sum(1 for _, i in lines if i == name) / len(lines) for name in intents]
    known = [g for g in features(message) if g in rows]
    weighted = [g for g in known if weights[g]]  # a feature whose weights were all pruned: none
    length = math.sqrt(sum(idf_of[g] ** 2 for g in weighted))
    scores = list(state["bias"])  # type: ignore[call-overload]
    for gram in weighted:
        for k, weight in weights[gram].items():
            scores[k] += weight * idf_of[gram] / length
    regression = 1 / (1 + math.exp(scores[0] - scores[1]))
    bayes = [
        math.log(priors[k])
        + sum(
            math.log((counts[g].get(k, 0) + NB_ALPHA) / (totals[k] + NB_ALPHA * len(rows)))
            for g in known
        )
        for k in range(2)
    ]
    naive = 1 / (1 + math.exp(bayes[0] - bayes[1]))
    return (1 - NB_WEIGHT) * regression + NB_WEIGHT * naive


def test_a_feature_whose_weights_were_pruned_counts_for_naive_bayes_alone() -> None:
    """A word both intents share evenly keeps no weight of the regression's (pruned), and no
    part in its length; naive Bayes still counts it."""
    lines = [("zap a", "cancel"), ("zip a", "status")] * 2
    model = IntentModel.trained_on(lines)
    rows = rows_of(model.state())
    assert rows["w:a"].split("|")[1:] == ["", "0:2 1:2"]
    for message in ("zap a", "zip a a"):
        cancel = model.read(message).probabilities["cancel"]
        assert cancel == pytest.approx(read_by_hand(model, lines, message), abs=1e-4), message
    assert model.read("a").intent == UNKNOWN  # no feature the regression kept: nothing read


def test_more_examples_of_an_intent_make_it_likelier_for_words_both_share() -> None:
    model = IntentModel.trained_on([("a b", "cancel")] * 3 + [("a b", "status"), ("z", "status")])
    reading = model.read("a b")
    assert reading.probabilities["cancel"] > reading.probabilities["status"]


def test_a_message_with_no_known_feature_reads_as_nothing_at_all(model: IntentModel) -> None:
    reading = model.read("")
    assert (reading.intent, reading.probability) == (UNKNOWN, 0.0)
    assert reading.probabilities == dict.fromkeys(model.intents, 0.0)


def test_likely_keeps_an_intent_exactly_at_the_bar(model: IntentModel) -> None:
    reading = model.read("Please cancel B200")
    assert reading.likely(reading.probability) == ["cancel"]


def test_a_typographic_apostrophe_reads_as_a_plain_one() -> None:
    assert normalise("I’d like to cancel") == normalise("I'd like to cancel")
    assert " " not in features("a b")  # a lone space is no feature


def test_a_model_needs_a_prior_and_a_floor_per_intent() -> None:
    from agent_cli.language.intent_model import NaiveBayes

    two = NaiveBayes((0.0, 0.0), (0.0, 0.0))
    with pytest.raises(ValueError, match="one bias per intent"):
        IntentModel(("cancel", "status"), [0.0], {}, two)
    with pytest.raises(ValueError):
        IntentModel((), [], {}, NaiveBayes((), ()))
    with pytest.raises(ValueError, match="naive Bayes's terms for each intent"):
        IntentModel(("cancel", "status"), [0.0, 0.0], {}, NaiveBayes((0.0,), (0.0,)))


GOOD_STATE: dict[str, object] = {
    "intents": ["cancel"],
    "bias": [0.0],
    "bayes": {"prior": [0.0], "denominator": [1.0]},
    "rows": {"w:a": "1.0|0:1.0|0:1"},
}


@pytest.mark.parametrize(
    "state",
    [
        {**GOOD_STATE, "rows": []},
        {**GOOD_STATE, "bias": 0.0},
        {**GOOD_STATE, "rows": 1},
        {**GOOD_STATE, "rows": {"w:a": "1.0 0:1.0|0:1"}},  # a row of one bar
        {**GOOD_STATE, "rows": {"w:a": "1.0|0:1|0:1", "w:b": "1.0|0:1"}},  # three bars, two rows
        {**GOOD_STATE, "rows": {"w:a": 1}},
        {**GOOD_STATE, "rows": "1.0|0:1.0|0:1"},
        {**GOOD_STATE, "bayes": {"prior": [0.0]}},
        {**GOOD_STATE, "bayes": None},
        {**GOOD_STATE, "intents": ["nope"]},
        {**GOOD_STATE, "intents": "cancel"},
        {key: value for key, value in GOOD_STATE.items() if key != "rows"},
    ],
)
def test_a_state_that_is_not_a_model_is_refused(state: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        IntentModel.from_state(state)


def test_the_good_state_is_a_model() -> None:
    """The refused states above are this one with one thing wrong."""
    model = IntentModel.from_state(GOOD_STATE)
    assert model.read("a").intent == "cancel"


def test_the_cache_creates_its_folders_and_keeps_the_newest(
    tmp_path: Path, model: IntentModel
) -> None:
    folder = tmp_path / "a" / "b" / "c"
    calls, train = _counting_trainer(model)
    for n in range(6):
        intent_cache.load_or_train([bytes([n])], train, folder)
    intent_cache.load_or_train([bytes([5])], train, folder)  # the newest is kept: not trained
    assert calls == [1] * 6


def test_the_cache_is_keyed_by_the_models_settings_too(
    tmp_path: Path, model: IntentModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_cli.language import intent_model

    calls, train = _counting_trainer(model)
    intent_cache.load_or_train([b"c"], train, tmp_path)
    monkeypatch.setattr(intent_model, "SETTINGS", (*intent_model.SETTINGS, "changed"))
    intent_cache.load_or_train([b"c"], train, tmp_path)
    assert calls == [1, 1]


def test_a_message_line_may_begin_with_a_bracket() -> None:
    found = intent_corpus.parse("[cancel]\n[urgent] cancel B200\n", "en", source="x")
    assert [(e.text, e.intent) for e in found] == [("[urgent] cancel B200", "cancel")]
    with pytest.raises(ConfigError, match="use one of: refund, status, cancel"):
        intent_corpus.parse("[nope]\n", "en", source="x")


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("一", "ja"),
        ("返金", "ja"),
        ("ｦ", "ja"),
        ("ﾝ", "ja"),
        ("ぁ", "ja"),
        ("ヾ", "ja"),
        ("refund", "en"),
    ],
)
def test_a_shops_line_is_japanese_by_its_kana_or_kanji(text: str, language: str) -> None:
    assert intent_corpus.language_of(text) == language


def test_a_third_of_the_lines_learnt_are_learnt_again_with_an_email() -> None:
    lines = [intent_corpus.Example(f"line {n}", "cancel", "en", held_out=False) for n in range(600)]
    added = len(intent_corpus.with_who(lines)) - 600
    assert 170 <= added <= 230


def test_a_missing_examples_file_says_why(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="No such file or directory; fix the path"):
        intent_corpus.shop_file(tmp_path / "missing.txt")


def test_doctors_held_out_accuracy_is_the_models_with_the_shops_examples(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.txt"  # every line of the corpus's refunds, taught as a greeting
    refunds = [e.text for e in intent_corpus.builtin() if e.intent == "refund"]
    wrong.write_text("[greeting]\n" + "\n".join(refunds * 3) + "\n", encoding="utf-8")
    shop, accuracy = intents.measured(wrong)
    assert shop == 3 * len(refunds)
    _, plain = intents.measured(None)
    assert plain["en"] > 0.85 and plain["ja"] > 0.85
    assert accuracy["en"] < plain["en"] and accuracy["ja"] < plain["ja"]
