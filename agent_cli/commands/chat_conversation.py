"""`agent chat`'s conversation, kept in the store like every other (channel `chat`): each line the
operator types is a customer message, each answer a desk message, the customer identified and
the change proposed are the conversation's memory, so `agent conversations list|show` see a
chat session and `chat --continue` / `--session ID` take it up whole (who was identified
included). A session's row is written at its first turn (a chat left at once leaves nothing),
opened by `operator:NAME` ($AGENT_OPERATOR, else the OS user): `--continue` takes up this
operator's newest, so on a team's store it never lands in a colleague's live chat; `--session`
takes any by its id. A customer's API token never reaches a chat (it was not opened by it).

Sessions logged before conversations were kept in the store (the run log's chat turns) are
taken up once: the conversation is made with the session's id and its answered turns.
`--dry-run` keeps its conversation in a scratch database (nothing is written anywhere)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from agent_cli.commands.logs import opened_log
from agent_cli.config import Settings
from agent_cli.core.seams import Exchange
from agent_cli.errors import (
    ConversationAmbiguous,
    ConversationNotFound,
    RunLogError,
    UsageError,
)
from agent_cli.record.log_place import log_place
from agent_cli.runtime.assemble import operator_name
from agent_cli.runtime.conversation import exchanges_of
from agent_cli.runtime.stores import opened_store
from agent_cli.store import conversations as stored
from agent_cli.store.sqlite import OrderStore

CHANNEL = "chat"


class ChatConversation:
    """The conversation a chat session speaks in: its id, and the store that keeps it."""

    def __init__(self, settings: Settings, *, dry_run: bool) -> None:
        self.settings = settings
        self.operator = f"operator:{operator_name()}"  # whose chats --continue looks at
        self.id = stored.new_id()
        self._made = False  # the row exists (written at the first turn, or taken up)
        self._scratch = OrderStore.in_memory() if dry_run else None

    @contextmanager
    def store(self) -> Iterator[OrderStore]:
        """The store the conversation lives in (the configured one; a scratch one dry)."""
        if self._scratch is not None:
            yield self._scratch
            return
        with opened_store(self.settings) as store:
            yield store

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.close()

    def made(self, store: OrderStore) -> str:
        """The conversation's id, its row written if this is its first turn."""
        if not self._made:
            stored.create(store, channel=CHANNEL, conversation_id=self.id, opened_by=self.operator)
            self._made = True
        return self.id

    def restart(self) -> None:
        """A new customer: a new conversation (the one before stays as it was)."""
        self.id, self._made = stored.new_id(), False

    def turns(self) -> list[Exchange]:
        """The turns the model is shown, oldest first."""
        if not self._made:
            return []
        with self.store() as store:
            return exchanges_of(stored.messages(store, self.id))[0]

    def resume(self, named: str | None) -> bool:
        """Take up the conversation `named` (its id or first characters), else this operator's
        newest chat left open; False when there is none (`named` never: a UsageError says
        so)."""
        with self.store() as store:
            found = _stored(store, named, self.operator)
            if found is None:
                found = self._logged(store, named)
            if found is None:
                return False
        if found.status == "closed":  # only by name: --continue looks at open ones
            raise UsageError(
                f"Conversation {found.id[:8]} is closed: nothing more is answered in it; start "
                "a new chat without --session"
            )
        self.id, self._made = found.id, True
        return True

    def _logged(self, store: OrderStore, named: str | None) -> stored.Conversation | None:
        """A chat session of the run log, from before sessions were kept in the store, taken
        up as a conversation of the same id (None when the log has none)."""
        if named is None and self.settings.log.enabled and not log_place(self.settings).exists():
            return None
        try:
            with opened_log(self.settings) as log:
                last = log.last_session(named)  # a UsageError when `named` is none of them
        except RunLogError:  # no log (or none readable): no session from before
            if named is None:
                return None
            raise UsageError(
                f"Chat session {named!r} is no session; see agent conversations list"
            ) from None
        except UsageError as missing:  # none or several of the log's: a chat is a conversation
            hint = str(missing).replace("agent logs list --kind chat", "agent conversations list")
            raise UsageError(hint) from None
        if last is None:
            return None
        session, turns = last
        if stored.get(store, session) is not None:
            return None  # a conversation already (another operator's, or closed): none from before
        made = stored.create(
            store, channel=CHANNEL, conversation_id=session, opened_by=self.operator
        )
        for turn in turns:
            stored.add_message(store, made.id, "customer", "message", turn.question)
            stored.add_message(store, made.id, "desk", "answer", turn.answer)
        return made


def _stored(store: OrderStore, named: str | None, operator: str) -> stored.Conversation | None:
    if named is None:  # this operator's own newest; another's only by its id
        return stored.newest(store, channel=CHANNEL, opened_by=operator)
    try:
        return stored.found(store, named)
    except ConversationAmbiguous as several:  # --session's mistake, as an unknown one is
        raise UsageError(str(several)) from None
    except ConversationNotFound:
        return None  # perhaps a session of the run log from before
