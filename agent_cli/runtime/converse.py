"""The Python API's conversations: `agent_cli.Conversation` and `agent_cli.converse`, for a caller
that carries one customer across many requests (a web chat, a help desk's webhook, a bot).

    conversation = agent_cli.Conversation.start(channel="web")
    turn = conversation.say("Where is my order? I'm noah.kim@example.com", message_id="m-1")
    print(turn.status, [reply.text for reply in turn.replies])

    agent_cli.converse(conversation.id, "Yes, cancel it", message_id="m-2")  # any process

The conversation lives in the configured store (SQLite or PostgreSQL), so a later message may
come to another process or machine on the same store. A caller that has already authenticated
the customer may say who they are (`customer=`): the desk takes that as identification,
recorded as the caller's assertion (`asserted_by`). Options are `agent_cli.ask`'s; `dry_run`
keeps nothing, so a conversation refuses it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Unpack

from agent_cli.config import Settings
from agent_cli.core.events import Event
from agent_cli.errors import UsageError
from agent_cli.record.recorder import KeptLog
from agent_cli.runtime.api import Options, run_options, sinks_for
from agent_cli.runtime.assemble import open_runtime
from agent_cli.runtime.conversation import Hooks, Turn, take_turn
from agent_cli.runtime.options import RunOptions, check_question
from agent_cli.runtime.stores import opened_store
from agent_cli.store import conversations as stored
from agent_cli.store import record_reads
from agent_cli.store.conversations import Conversation as Stored
from agent_cli.store.conversations import Message

MAX_CHANNEL_CHARS = 64
MAX_MESSAGE_ID_CHARS = 200


@dataclass(frozen=True, slots=True)
class Setup:
    """The options and settings every message of a caller's conversations is answered with;
    `kept`: the run log a serving process keeps open for all its turns."""

    run: RunOptions
    settings: Settings
    kept: KeptLog | None = None


class Conversation:
    """A conversation kept in the store, by id: `say` answers one customer message."""

    def __init__(self, conversation_id: str, **options: Unpack[Options]) -> None:
        """Take up the conversation `conversation_id` (ConversationNotFound if none)."""
        self._setup = setup_for(options)
        with opened_store(self._setup.settings) as store:
            self.id = stored.found(store, conversation_id).id

    @classmethod
    def start(
        cls,
        *,
        channel: str = "api",
        customer: str | None = None,
        asserted_by: str = "api",
        **options: Unpack[Options],
    ) -> Conversation:
        """A new conversation. `customer`: the customer's id in the store, when the caller has
        authenticated them already (recorded as `asserted_by`'s assertion)."""
        setup = setup_for(options)
        made = start_conversation(setup, channel, customer, asserted_by)
        conversation = cls.__new__(cls)
        conversation._setup, conversation.id = setup, made.id
        return conversation

    def say(self, text: str, *, message_id: str | None = None) -> Turn:
        """Answer one customer message. `message_id`: the caller's id for it; the same id again
        returns the same turn and runs nothing (a retried request is safe)."""
        return answer_message(self._setup, self.id, text, message_id)

    def record(self) -> Stored:
        """The conversation as the store holds it now: status, customer, channel."""
        with opened_store(self._setup.settings) as store:
            return stored.found(store, self.id)

    @property
    def status(self) -> str:
        return self.record().status

    @property
    def messages(self) -> list[Message]:
        """Every message, in order: the customer's, the desk's and a person's."""
        with opened_store(self._setup.settings) as store:
            return stored.messages(store, self.id)

    def close(self, *, by: str = "api") -> None:
        """No more messages are answered in it."""
        with opened_store(self._setup.settings) as store:
            stored.close(store, self.id, by=by)


def converse(
    conversation_id: str, text: str, *, message_id: str | None = None, **options: Unpack[Options]
) -> Turn:
    """Answer one customer message of the conversation `conversation_id` (see `Conversation`)."""
    return Conversation(conversation_id, **options).say(text, message_id=message_id)


def setup_for(options: Options) -> Setup:
    """`options` as settings; UsageError for a dry run (a conversation lives in the store)."""
    run = run_options(options)
    if run.dry_run:
        raise UsageError(
            "a dry run keeps nothing, and a conversation lives in the store; drop dry_run "
            "(the offline model writes to the configured store)"
        )
    return Setup(run, run.settings())


def _channel(channel: str) -> str:
    name = channel.strip()
    if not name or len(name) > MAX_CHANNEL_CHARS or not name.isprintable():
        raise UsageError(f"channel {channel!r} is not a channel's name; give a short word")
    return name


def start_conversation(
    setup: Setup,
    channel: str,
    customer: str | None,
    asserted_by: str,
    *,
    opened_by: str | None = None,
) -> Stored:
    """A new conversation in the store; `customer` (vouched for by `asserted_by`) must be one
    of the store's customers (UsageError otherwise); `opened_by`: the API token opening it."""
    channel = _channel(channel)
    with opened_store(setup.settings) as store:
        if customer is not None and record_reads.customer(store, customer) is None:
            raise UsageError(f"No customer {customer!r} in the store; give a customer's id")
        return stored.create(
            store,
            channel=channel,
            customer_id=customer,
            asserted_by=asserted_by if customer is not None else None,
            opened_by=opened_by,
        )


def message_key(message_id: str | None) -> str | None:
    if message_id is None:
        return None
    if not message_id or len(message_id) > MAX_MESSAGE_ID_CHARS or not message_id.isprintable():
        raise UsageError(
            f"a message id is 1 to {MAX_MESSAGE_ID_CHARS} printable characters; got "
            f"{message_id[:40]!r}"
        )
    return message_id


def answer_message(
    setup: Setup,
    conversation_id: str,
    text: str,
    message_id: str | None,
    listeners: tuple[Callable[[Event], None], ...] = (),
) -> Turn:
    """One customer message of the conversation `conversation_id` (its full id), answered."""
    question = check_question(text, setup.settings.limits.max_question_chars)
    key = message_key(message_id)
    with ExitStack() as stack:
        store = stack.enter_context(opened_store(setup.settings))
        runtime = open_runtime(setup.run, stack, settings=setup.settings)
        sinks = sinks_for(
            setup.run,
            setup.settings,
            stack,
            kind="conversation",
            session_id=conversation_id,
            kept=setup.kept,
        )
        hooks = Hooks(sinks=(*sinks, *listeners))  # listeners: agent serve's event streams
        return take_turn(runtime, store, conversation_id, question, message_id=key, hooks=hooks)
