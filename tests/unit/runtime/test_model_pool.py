"""A serving process keeps its connected models between messages (runtime/model_pool.py): one
connection to the provider for many messages, one model per turn at a time, a model a failed
turn leaves closed, none kept past the pool's end, none shared across providers or keys."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

import agent_cli
from agent_cli.runtime.model_pool import ModelPool, connected_with, pooled, use_models
from tests.fakellm import FakeLLM, openai_text

KEY = "sk-test-SECRET-0123456789abcdef"


class _Model:
    made = 0

    def __init__(self) -> None:
        _Model.made += 1
        self.closed = False

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def models() -> Iterator[ModelPool]:
    pool = ModelPool(keep=2)
    use_models(pool)
    yield pool
    use_models(None)
    pool.close()


def test_a_model_given_back_is_the_next_one_taken(models: ModelPool) -> None:
    with ExitStack() as stack:
        first = pooled(stack, "k", _Model)
    with ExitStack() as stack:
        again = pooled(stack, "k", _Model)
        assert again is first and not first.closed
        with ExitStack() as inner:  # a turn running at the same time gets its own
            other = pooled(inner, "k", _Model)
        assert other is not first
    other_key = models.take("another provider", _Model)
    assert other_key is not first and other_key is not other


def test_a_model_a_failed_turn_leaves_is_closed_not_kept(models: ModelPool) -> None:
    with pytest.raises(RuntimeError), ExitStack() as stack:
        broken = pooled(stack, "k", _Model)
        raise RuntimeError("the turn failed")
    assert broken.closed
    assert models.take("k", _Model) is not broken


def test_the_pool_keeps_a_few_and_closes_the_rest_and_all_at_its_end(models: ModelPool) -> None:
    made = [_Model() for _ in range(3)]
    for model in made:
        models.give("k", model)
    assert [m.closed for m in made] == [False, False, True]  # keep=2
    models.close()
    assert all(m.closed for m in made)
    late = _Model()
    models.give("k", late)  # a turn that ends after the stop
    assert late.closed


def test_without_a_pool_each_runtime_closes_its_own_model() -> None:
    with ExitStack() as stack:
        model = pooled(stack, "k", _Model)
    assert model.closed


def test_models_connected_with_another_key_or_setting_are_told_apart() -> None:
    from agent_cli.config import ProviderSettings
    from agent_cli.providers.choice import ProviderChoice

    choice = ProviderChoice(name="openai", kind="openai", model="m", base_url="http://x/v1")
    settings = ProviderSettings()
    one = connected_with(choice, settings, "key-1")
    assert one == connected_with(choice, settings, "key-1")
    assert one != connected_with(choice, settings, "key-2")
    assert one != connected_with(choice, settings.model_copy(update={"stream": False}), "key-1")
    assert "key-1" not in one


def test_a_serving_process_connects_to_the_model_once_for_many_messages(
    fake_llm: FakeLLM, models: ModelPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    options = {"provider": "openai", "base_url": fake_llm.url + "/v1", "grounding": False}
    fake_llm.queue(*(openai_text(f"Answer {n}.") for n in range(3)))
    conversation = agent_cli.Conversation.start(**options)  # type: ignore[arg-type]
    for n in range(3):
        turn = conversation.say(f"Question {n}?")
        assert turn.replies[0].text == f"Answer {n}."
    assert fake_llm.connections == 1


def test_turns_at_the_same_time_never_share_a_model(models: ModelPool) -> None:
    held: list[object] = []
    ready, release = threading.Barrier(4), threading.Event()  # three turns and this thread

    def turn() -> None:
        with ExitStack() as stack:
            held.append(pooled(stack, "k", _Model))
            ready.wait(timeout=60)
            release.wait(timeout=60)

    threads = [threading.Thread(target=turn) for _ in range(3)]
    for thread in threads:
        thread.start()
    ready.wait(timeout=60)  # all three hold one now
    release.set()
    for thread in threads:
        thread.join(timeout=60)
    assert len({id(model) for model in held}) == 3


def test_agent_serve_keeps_one_connection_to_the_model_across_messages(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    from starlette.testclient import TestClient

    from agent_cli.runtime.converse import setup_for
    from agent_cli.serve.app import make_app
    from tests.contract.test_serve import auth, say, start, token

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    options = {"provider": "openai", "base_url": fake_llm.url + "/v1", "grounding": False}
    fake_llm.queue(*(openai_text(f"Answer {n}.") for n in range(3)))
    secret = token()
    with TestClient(make_app(setup_for(options))) as client:  # type: ignore[arg-type]
        conversation = start(client, secret)
        for n in range(3):
            answered = say(client, secret, conversation, f"m{n}", f"Question {n}?")
            assert answered.json()["replies"][0]["text"] == f"Answer {n}."
        assert client.get("/healthz", headers=auth(secret)).status_code == 200
    assert fake_llm.connections == 1
