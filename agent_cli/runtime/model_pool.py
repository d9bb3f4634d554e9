"""A serving process's connected models (`agent serve`): each message's turn builds its runtime
anew, and with it a model adapter whose HTTP client connected to the provider anew (a TCP
connection, and over HTTPS a TLS handshake, before the first byte of every message). The pool
keeps the adapters between turns: a turn takes one (or connects one) and gives it back, so a
serving process connects about once per concurrent turn, not once per message.

One turn at a time holds an adapter (it keeps a request's state while one runs); one given
back by a turn that raised is closed, not kept; at most `keep` wait per provider. Adapters
are told apart by everything they were connected with (the provider, its settings, the key)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from collections.abc import Callable
from contextlib import ExitStack
from typing import Protocol, TypeVar, cast

from agent_cli.config import ProviderSettings
from agent_cli.providers.choice import ProviderChoice


class Closable(Protocol):
    def close(self) -> None: ...


M = TypeVar("M", bound=Closable)


class ModelPool:
    """Idle connected models, by what they were connected with."""

    def __init__(self, *, keep: int = 8) -> None:
        self.keep = keep
        self._idle: dict[str, list[Closable]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def take(self, key: str, connect: Callable[[], Closable]) -> Closable:
        """An idle model connected as `key` says, else a new one."""
        with self._lock:
            idle = self._idle.get(key)
            if idle:
                return idle.pop()
        return connect()

    def give(self, key: str, model: Closable, *, whole: bool = True) -> None:
        """`model` back after a turn; closed instead when the turn raised, the pool is closed,
        or `keep` wait already."""
        if whole:
            with self._lock:
                idle = self._idle.setdefault(key, [])
                if not self._closed and len(idle) < self.keep:
                    idle.append(model)
                    return
        model.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, {}
        for models in idle.values():
            for model in models:
                model.close()


_POOL: list[ModelPool | None] = [None]  # the serving process's, while it serves


def use_models(pool: ModelPool | None) -> None:
    """Keep every run's connected model in `pool` from now on (None: stop)."""
    _POOL[0] = pool


def connected_with(choice: ProviderChoice, settings: ProviderSettings, key: str | None) -> str:
    """What tells two adapters apart: the provider chosen, its settings and a digest of the key
    (the key itself is never kept here)."""
    identity = [dataclasses.asdict(choice), settings.model_dump(mode="json"), key or ""]
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def pooled(stack: ExitStack, key: str, connect: Callable[[], M]) -> M:
    """A model connected as `key` says, closed with `stack`, or, while a pool is in use, taken
    from it and given back (kept when the stack closed without an exception)."""
    pool = _POOL[0]
    if pool is None:
        model = connect()
        stack.callback(model.close)
        return model
    taken = cast(
        M, pool.take(key, connect)
    )  # given back under the same key: a model `connect` made

    def give_back(kind: type[BaseException] | None, *_: object) -> bool:
        pool.give(key, taken, whole=kind is None)
        return False  # an exception goes on

    stack.push(give_back)
    return taken
