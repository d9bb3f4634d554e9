"""One customer message in a conversation kept in the store (store/conversations.py): the turn
that answers it, in whichever process receives it.

A turn holds the conversation's lease, writes the customer's message before anything answers it,
takes up the desk's memory of the conversation (who was identified, what was proposed), runs the
loop with nobody at a terminal (a question the desk asks ends the turn and is answered by the
next message; an approval waits in the queue), then writes the desk's replies, the conversation's
status and memory, and gives the lease back, in one transaction. The same caller's message id
again is answered from the store and runs nothing. While a person holds the conversation
(`handed_over`), a message is kept for them and the desk says nothing."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from agent_cli.core.events import ApprovalDecided, Event, RunFinished, ToolObserved
from agent_cli.core.seams import Exchange, TextDelta
from agent_cli.errors import AgentError, Interrupted, NeedsInput
from agent_cli.policy.language import has_words, language_of
from agent_cli.runtime.answerers import Approver, Responder, nobody, wait_in_queue
from agent_cli.runtime.assemble import Runtime
from agent_cli.runtime.drive import drive
from agent_cli.runtime.memory import Memory
from agent_cli.runtime.stores import opened_store
from agent_cli.store import conversation_leases as leases
from agent_cli.store import conversations as stored
from agent_cli.store.conversations import ConversationStatus, Message
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools.identity import CustomerSession

DeskKind = Literal["answer", "question", "proposal", "notice"]
LEASE_MARGIN_S = 10.0  # a message waits for a held conversation this long past a run's timeout
LEASE_S = 30.0  # a turn's lease, renewed every third of it while the turn runs
_WRITES = ("changed", "refunded")  # the outcomes of a call that changed the store
# Conversations no channel carries to the customer (an operator's terminal, an eval case).
LOCAL_CHANNELS = ("chat", "eval")


@dataclass(frozen=True, slots=True)
class DeskReply:
    kind: DeskKind
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """How one customer message was answered."""

    conversation: str
    message: str  # the caller's message id, else the stored message's number
    status: ConversationStatus  # where the conversation stands now
    replies: tuple[DeskReply, ...]
    proposal: dict[str, str] | None  # the change waiting for the customer's yes: id, summary
    run_id: str | None  # None: nothing ran (a person holds the conversation)
    run_status: str | None
    repeated: bool = False  # answered before: this is the stored answer to a retry
    events: tuple[Event, ...] = field(default=(), repr=False)
    error: AgentError | None = field(default=None, repr=False)

    def body(self) -> dict[str, Any]:
        """The turn as JSON-ready data (`agent serve`'s reply, and what a retry reads back)."""
        return {
            "conversation": self.conversation,
            "message": self.message,
            "status": self.status,
            "replies": [{"kind": r.kind, "text": r.text} for r in self.replies],
            "proposal": self.proposal,
            "run": None if self.run_id is None else {"id": self.run_id, "status": self.run_status},
        }

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> Turn:
        run = body.get("run") or {}
        return cls(
            conversation=str(body["conversation"]),
            message=str(body["message"]),
            status=body["status"],
            replies=tuple(DeskReply(r["kind"], r["text"]) for r in body.get("replies", ())),
            proposal=body.get("proposal"),
            run_id=run.get("id"),
            run_status=run.get("status"),
            repeated=True,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Hooks:
    """What a caller hands a turn: where its events go, and how it waits and streams; who
    answers the desk's questions inside the turn (`agent chat`'s operator, an eval's customer;
    by default nobody: the question ends the turn and the next message answers it) and who
    approves; `heartbeat`: renew the lease from a thread while the turn runs (False for a store
    no other process shares, such as an eval case's)."""

    sinks: tuple[Callable[[Event], None], ...] = ()
    on_text: Callable[[TextDelta], None] | None = None
    waiting: Callable[[], AbstractContextManager[object]] = nullcontext
    respond: Responder = nobody
    approve: Approver = wait_in_queue
    heartbeat: bool = True


def take_turn(
    runtime: Runtime,
    store: OrderStore,
    conversation_id: str,
    text: str,
    *,
    message_id: str | None = None,
    hooks: Hooks = Hooks(),
) -> Turn:
    """Answer one customer message of the conversation (see the module's doc)."""
    owner = uuid.uuid4().hex
    held = _Held(store, leases.lease(store, conversation_id, owner, LEASE_S), owner)
    try:
        if message_id is not None and (prior := stored.by_key(store, held.id, message_id)):
            if prior.reply is not None:
                held.release()
                return Turn.from_body(json.loads(prior.reply))
            message = prior  # received before, never answered (a crash): answered now
        else:
            message = stored.add_message(
                store, held.id, "customer", "message", text, key=message_id
            )
        if held.conversation.status == "handed_over" and not _local(held.conversation):
            return _kept_for_a_person(held, message)
        with _Heartbeat(runtime, held) if hooks.heartbeat else nullcontext():
            return _answered(runtime, held, message, hooks)
    except BaseException:
        held.release()
        raise


@dataclass(frozen=True, slots=True)
class _Held:
    """A conversation this process holds the lease of, for one turn."""

    store: OrderStore
    conversation: stored.Conversation
    owner: str

    @property
    def id(self) -> str:
        return self.conversation.id

    def release(self) -> None:
        leases.release(self.store, self.id, self.owner)


class _Heartbeat:
    """The lease renewed from a thread of its own (its own store connection) while the turn
    runs, so a killed process's conversation is free within LEASE_S, however long a turn."""

    def __init__(self, runtime: Runtime, held: _Held) -> None:
        self._settings, self._held = runtime.settings, held
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="lease", daemon=True)

    def __enter__(self) -> None:
        self._thread.start()

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        if self._stop.wait(LEASE_S / 3):
            return  # most turns end first: no connection is opened for them
        try:
            with opened_store(self._settings) as store:
                while leases.renew(store, self._held.id, self._held.owner, LEASE_S):
                    if self._stop.wait(LEASE_S / 3):
                        return
        except AgentError:  # the store is down: the turn's own writes will say so
            return


def _local(conversation: stored.Conversation) -> bool:
    """A conversation no channel carries (see LOCAL_CHANNELS): the operator at the terminal
    goes on after a hand-over, and the person reaches the customer some other way."""
    return conversation.channel in LOCAL_CHANNELS


def _kept_for_a_person(held: _Held, message: Message) -> Turn:
    turn = Turn(
        conversation=held.id,
        message=message.message_key or str(message.id),
        status="handed_over",
        replies=(),
        proposal=None,
        run_id=None,
        run_status=None,
    )
    _finish(held, message, turn, held.conversation.state)
    return turn


def _answered(runtime: Runtime, held: _Held, message: Message, hooks: Hooks) -> Turn:
    session = runtime.identity = runtime.identity or CustomerSession()
    session.restore(held.conversation.state, held.conversation.customer_id)
    # A person who takes over answers in the conversation, when it reaches the customer.
    session.channel = None if _local(held.conversation) else held.conversation.channel
    runtime.language = channel_language(held.conversation)
    earlier = [m for m in stored.messages(held.store, held.id) if m.id < message.id]
    exchanges, unanswered = exchanges_of(earlier)
    question = _question(unanswered, message.text, runtime.settings.limits.max_question_chars)
    memory = Memory(runtime.settings.chat.memory_turns, runtime.settings.chat.memory_chars)
    memory.turns.extend(exchanges)
    events: list[Event] = []
    error: AgentError | None = None
    try:
        drive(
            runtime.events(question, memory.recent(), hooks.on_text),
            [*hooks.sinks, events.append],
            waiting=hooks.waiting,
            respond=_kept_answers(held, session, hooks.respond),
            approve=hooks.approve,
        )
    except Interrupted:
        raise
    except AgentError as failure:
        error = failure
    turn = _turn(held.id, message, events, error, session, language=runtime.language)
    if held.conversation.status == "handed_over":  # a local one: the operator went on
        turn = replace(turn, status="handed_over")
    elif turn.status == "open" and stored.awaits_approval(held.store, held.id):
        turn = replace(turn, status="awaiting_approval")  # an earlier turn's change still waits
    _finish(held, message, turn, session.state())
    return turn


def _kept_answers(held: _Held, session: CustomerSession, respond: Responder) -> Responder:
    """`respond`, with each question it answers and its answer written to the conversation as
    they come (nothing said is lost, and the next turn remembers both)."""

    def answered(question: str) -> str | None:
        answer = respond(question)
        if answer is not None:
            kind: stored.ReplyKind = "proposal" if session.consent.pending else "question"
            stored.add_message(held.store, held.id, "desk", kind, question)
            stored.add_message(held.store, held.id, "customer", "message", answer)
        return answer

    return answered


def _finish(held: _Held, message: Message, turn: Turn, state: dict[str, Any]) -> None:
    customer = state.get("customer_id")
    stored.finish_turn(
        held.store,
        held.id,
        held.owner,
        stored.TurnRecord(
            answered=message.id,
            replies=tuple((r.kind, r.text) for r in turn.replies),
            run_id=turn.run_id,
            status=turn.status,
            customer_id=customer if isinstance(customer, str) else held.conversation.customer_id,
            state=state,
            outcome=json.dumps(turn.body(), ensure_ascii=False),
        ),
    )


def exchanges_of(messages: list[Message]) -> tuple[list[Exchange], list[str]]:
    """The conversation as the model is shown it: each request with the customer's answers to
    the desk's questions on it, and the desk's last reply (a question the desk asked ended its
    turn; the next message answers it, so it joins the same request, unless it is the last); a
    turn that failed (only a notice for reply) is left out, as `agent chat` always left it; and
    the customer's last messages, if no reply followed them (a turn that never finished)."""
    exchanges: list[Exchange] = []
    lines: list[str] = []
    answers: list[Message] = []
    asked = False  # the desk's last reply asked the customer something
    for m in messages:
        if m.role == "customer":
            if answers:
                if not asked:
                    _remember(exchanges, lines, answers)
                    lines = []
                answers = []
            lines.append(m.text)
        else:
            answers.append(m)
            asked = m.kind in ("question", "proposal")
    if answers:
        _remember(exchanges, lines, answers)
        lines = []
    return exchanges, lines


def _remember(exchanges: list[Exchange], lines: list[str], answers: list[Message]) -> None:
    if all(m.kind == "notice" for m in answers):
        return  # the turn failed: nothing the desk said is worth the model's reading
    texts = (m.text if m.role == "desk" else f"(a person) {m.text}" for m in answers)
    exchanges.append(Exchange("\n".join(lines), "\n".join(texts)))


def _question(unanswered: list[str], text: str, limit: int) -> str:
    """This message, after the ones no turn answered, when they fit the question's limit."""
    joined = "\n".join([*unanswered, text])
    return joined if unanswered and len(joined) <= limit else text


def _turn(
    conversation: str,
    message: Message,
    events: list[Event],
    error: AgentError | None,
    session: CustomerSession,
    *,
    language: str | None = None,
) -> Turn:
    finished = next((e for e in reversed(events) if isinstance(e, RunFinished)), None)
    pending = session.consent.pending
    replies: list[DeskReply] = []
    if isinstance(error, NeedsInput):
        replies.append(DeskReply("proposal" if pending else "question", error.question))
    elif finished is not None and finished.answer and finished.status in _ANSWERED:
        replies.append(DeskReply("proposal" if pending else "answer", finished.answer))
    else:
        changed = writes_made(events) > 0
        replies.append(
            DeskReply("notice", _sorry(message.text, changed=changed, language=language))
        )
    return Turn(
        conversation=conversation,
        message=message.message_key or str(message.id),
        status=_status(events, error, pending is not None, replies[0].kind == "notice"),
        replies=tuple(replies),
        proposal={"id": pending.id, "summary": pending.summary} if pending else None,
        run_id=finished.run_id if finished else None,
        run_status=finished.status if finished else None,
        events=tuple(events),
        error=error,
    )


_ANSWERED = ("answered", "pending_approval", "handed_over")


def _status(
    events: list[Event], error: AgentError | None, proposing: bool, failed: bool
) -> ConversationStatus:
    if any(isinstance(e, ToolObserved) and e.ticket is not None for e in events):
        return "handed_over"
    if any(isinstance(e, ApprovalDecided) and e.queued is not None for e in events):
        return "awaiting_approval"
    if not failed and (isinstance(error, NeedsInput) or proposing):
        return "awaiting_customer"
    return "open"


def writes_made(events: Iterable[Event]) -> int:
    """How many calls of a run changed the store (a write committed, a refund made)."""
    return sum(1 for e in events if isinstance(e, ToolObserved) and e.outcome.kind in _WRITES)


def channel_language(conversation: stored.Conversation) -> str | None:
    """The language the conversation's channel expects when words say none (its address's
    `language`: LINE's is Japanese)."""
    language = (conversation.address or {}).get("language")
    return language if isinstance(language, str) else None


def _sorry(text: str, *, changed: bool, language: str | None = None) -> str:
    """What the customer reads when the turn could not finish, in their language (the
    channel's, when their words say none); "nothing was changed" only when it is so."""
    if language_of(text) == "ja" or (language == "ja" and not has_words(text)):
        done = "" if changed else "何も変更していません。"
        return (
            f"申し訳ありません、最後までお答えできませんでした。{done}"
            "もう一度お送りいただくか、担当者をご希望ください。"
        )
    done = "" if changed else ", and nothing was changed"
    return (
        f"Sorry, I could not finish answering that{done}. Please send it again, or ask for a "
        "person."
    )
