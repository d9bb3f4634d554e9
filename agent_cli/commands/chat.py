"""`agent chat`: one terminal, question after question, for a support operator.

Each line is a turn of a conversation kept in the store (chat_conversation.py): one run of the
loop, rendered live as in `agent ask`, taken as any channel's message is (runtime/conversation
.py), with the operator answering the desk's questions and approvals at the terminal. Earlier
questions and answers go to the model as conversation memory, newest kept: the oldest turns are
dropped first once `chat.memory_turns` or `chat.memory_chars` is reached. A failing turn prints
its one-line error and the session goes on. Lines starting with `/` are commands.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import ExitStack, suppress
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from agent_cli.commands.chat_conversation import ChatConversation
from agent_cli.commands.notices import once_per_terminal
from agent_cli.config import Settings, state_dir
from agent_cli.core import interrupts
from agent_cli.core.events import ApprovalRequested, Event
from agent_cli.core.seams import QUEUE, ApprovalVerdict, Exchange
from agent_cli.errors import AgentError, Interrupted, NeedsInput, Terminated, UsageError
from agent_cli.record import otel_gate
from agent_cli.record.tracing import TraceWriter, open_trace_file
from agent_cli.runtime.answerers import read_approval, verdict_from
from agent_cli.runtime.assemble import Runtime, open_runtime
from agent_cli.runtime.conversation import Hooks, Turn, take_turn
from agent_cli.runtime.drive import run_recorder
from agent_cli.runtime.memory import Memory
from agent_cli.runtime.options import RunOptions, check_question
from agent_cli.store import conversations as stored
from agent_cli.store.sqlite import OrderStore
from agent_cli.ui import RunView, make_console, show_tools
from agent_cli.ui.chat_view import ChatView
from agent_cli.ui.console import notice

COMMANDS = {
    "/help": "show this list",
    "/tools": "list the tools the agent can call",
    "/history": "show the conversation the model remembers",
    "/reset": "forget the conversation and the customer (a new customer starts)",
    "/trace FILE": "append the session's trace to FILE; /trace off stops",
    "/model NAME": "switch to another model of the same provider",
    "/exit": "leave (Ctrl-D works too)",
}
INTERRUPTED = "(The operator interrupted this turn.)"


class LineSource:
    """Lines typed at a terminal (readline editing, a persistent history, a prompt) or piped in
    (no prompt, so stdout holds only the conversation)."""

    def __init__(self, history_file: Path | None) -> None:
        self.interactive = sys.stdin.isatty()
        self._history_file = history_file if self.interactive else None
        if self._history_file is not None:
            self._load_history(self._history_file)

    def read(self, prompt: str) -> str | None:
        """The next line, or None at end of input. Ctrl-C raises KeyboardInterrupt."""
        if self.interactive:
            try:
                line = input(prompt)
            except EOFError:
                return None
            self._remember(line)
            return line
        line = sys.stdin.readline()
        return line.rstrip("\n") if line else None

    def _load_history(self, path: Path) -> None:
        import readline

        readline.set_history_length(1_000)
        with suppress(OSError):  # a first session has no history yet
            readline.read_history_file(path)

    def _remember(self, line: str) -> None:
        if self._history_file is None or not line.strip():
            return
        import readline

        try:
            self._history_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            readline.write_history_file(self._history_file)
            os.chmod(self._history_file, 0o600)
        except OSError:
            self._history_file = None  # an unwritable history must not break the session


def history_path(setting: str | None) -> Path | None:
    """The readline history file: the setting, else the user's state directory; "" is none."""
    if setting is None:
        return state_dir() / "history"
    return Path(setting).expanduser() if setting.strip() else None


class Session:
    """The read-run-render loop of `agent chat`."""

    def __init__(
        self,
        options: RunOptions,
        settings: Settings,
        stack: ExitStack,
        *,
        resume: bool | str = False,
    ) -> None:
        self.conversation = ChatConversation(settings, dry_run=options.dry_run)
        stack.callback(self.conversation.close)
        self.options = options
        self.settings = settings
        self.stack = stack
        self.runtime: Runtime = open_runtime(
            options, stack, settings=settings, notify=once_per_terminal(notice)
        )
        self.failed_turns = 0
        self.unknown_commands = 0  # slash commands that do not exist, typed or piped
        self.leaving = False  # /exit typed at a reply> prompt
        self.console = make_console()
        self.lines = LineSource(history_path(settings.chat.history_file))
        self.view = ChatView(self.console, interactive=self.lines.interactive)
        self._trace: BinaryIO | None = None
        if options.trace:
            self.start_trace(options.trace)
        self._opening = self._resume(resume) if resume else None  # said after the welcome
        self.log = run_recorder(settings, kind="chat", session_id=self.id, dry_run=options.dry_run)
        if self.log is not None:
            stack.callback(self.log.close)

    @property
    def id(self) -> str:
        """The session's id: its conversation's."""
        return self.conversation.id

    def _resume(self, session: bool | str) -> str:
        """`chat --continue` (the newest chat left open) or `--session ID` (that conversation):
        take it up, its turns and whoever it identified."""
        if not self.conversation.resume(session if isinstance(session, str) else None):
            return "No earlier session to continue; starting a new one."
        turns = self.conversation.turns()
        kept = len(self._memory(turns).recent())
        return f"Continuing session {self.id[:8]}: {kept} of {len(turns)} turns remembered."

    def _memory(self, turns: list[Exchange]) -> Memory:
        return Memory(self.settings.chat.memory_turns, self.settings.chat.memory_chars, turns)

    def _greet(self) -> None:
        self.view.welcome(self.runtime.model.provider, self.runtime.model.model)
        if self._opening is not None:
            self.view.note(self._opening)

    def loop(self) -> int:
        """Turns until end of input or /exit. Exit code 0; 1 when input was piped and a turn
        failed, so a script feeding questions can tell."""
        self._greet()
        while True:
            try:
                line = self.lines.read("agent> ")
            except KeyboardInterrupt as interrupt:  # Ctrl-C at the prompt clears the line
                if isinstance(interrupt, Terminated):
                    raise Interrupted(terminated=True) from None
                self.view.newline()
                continue
            if line is None:
                self.view.newline()
                return self.exit_code()
            line = line.strip()
            if not line:
                continue
            if line.startswith("/"):
                if self.command(line) == "exit":
                    return self.exit_code()
                continue
            if not self.turn(line) and not self.leaving:
                self.failed_turns += 1
            if self.leaving:
                return self.exit_code()

    def exit_code(self) -> int:
        """Piped input: 2 after an unknown slash command (the script's mistake), 1 after a failed
        turn; else 0. At a terminal, 0: the operator saw each error as it came."""
        if self.lines.interactive:
            return 0
        return 2 if self.unknown_commands else 1 if self.failed_turns else 0

    def _sinks(self, *more: Callable[[Event], None]) -> list[Callable[[Event], None]]:
        """A turn's sinks: the run log, the session's own record, `more`, and the OTel export
        when it is asked for (a span tree a turn)."""
        sinks: list[Callable[[Event], None]] = [self._record, *more]
        if self.log is not None:
            sinks.insert(0, self.log)
        if exported := otel_gate.sink("chat", self.id):
            sinks.append(exported)
        return sinks

    def turn(self, line: str) -> bool:
        """One question: a turn of the conversation, run with the turns before it. False when
        the turn failed (an error, a limit, an interruption)."""
        try:
            question = check_question(line, self.settings.limits.max_question_chars)
            run_view = RunView(self.console)
            hooks = Hooks(
                sinks=tuple(self._sinks(run_view.show)),
                on_text=run_view.stream,
                waiting=run_view.waiting,
                respond=self.reply,
                approve=self.approve,
            )
            with self.conversation.store() as store:
                made = self.conversation.made(store)
                turn = self._taken(store, made, question, hooks)
        except Interrupted as exc:
            if exc.exit_code == 143 or interrupts.terminated():  # SIGTERM ends the session
                raise Interrupted(terminated=True) from None
            interrupts.release()  # the session goes on: the next Ctrl-C acts again
            self.view.error(str(exc))
            return False
        except AgentError as exc:
            self.view.error(str(exc))
            return False
        except KeyboardInterrupt as interrupt:
            if isinstance(interrupt, Terminated):
                raise Interrupted(terminated=True) from None
            interrupts.release()
            self.view.error("Interrupted")
            return False
        return self._told(turn)

    def _taken(self, store: OrderStore, conversation: str, question: str, hooks: Hooks) -> Turn:
        """The turn; one the operator interrupted leaves a notice after the line, so the next
        turn does not take the line up again as a message nobody answered."""
        try:
            return take_turn(self.runtime, store, conversation, question, hooks=hooks)
        except (Interrupted, KeyboardInterrupt):
            with suppress(AgentError):
                stored.add_message(store, conversation, "desk", "notice", INTERRUPTED)
            raise

    def _told(self, turn: Turn) -> bool:
        """What the operator reads besides the run's own rendering; False if the turn failed."""
        if turn.run_id is None:  # a person holds the conversation: the desk said nothing
            self.view.note("A person has this conversation; the message is kept for them.")
            return True
        if turn.error is not None:
            self._show_failure(turn.error)
            return False
        return turn.replies[0].kind != "notice"

    def _show_failure(self, exc: AgentError) -> None:
        if isinstance(exc, NeedsInput) and self.leaving:  # /exit at reply>: left unanswered
            self.view.note(f"Left unanswered: {exc.question}")
        else:
            self.view.error(str(exc))

    def reply(self, question: str) -> str | None:
        """The operator's next line answers the model's question (None at end of input). An
        empty line asks again; slash commands work here too: /exit gives no answer and ends
        the session after this turn, the others run and the question is asked again."""
        while True:
            try:
                line = self.lines.read("reply> ")
            except KeyboardInterrupt:
                self.view.newline()  # the run's end is printed on a fresh line
                raise
            if line is None:
                self.view.newline()
                return None
            line = line.strip()
            if not line:
                continue
            if not line.startswith("/"):
                return line
            if self.command(line) == "exit":
                self.leaving = True
                return None

    def approve(self, request: ApprovalRequested) -> ApprovalVerdict:
        """Only a person at a terminal approves; piped lines never do (fail closed)."""
        if not self.lines.interactive:
            return QUEUE  # piped lines never approve: a person elsewhere may
        try:
            # The summary is on the screen already: the view printed it a line above.
            line = read_approval(self.lines.read, "approve? [y/N/q] ", self.view.note)
        except Terminated:
            raise
        except KeyboardInterrupt:
            self.view.newline()
            interrupts.release()  # answered: the run goes on, and the next Ctrl-C stops it
            return ApprovalVerdict(False, "operator", "Ctrl-C at the approval prompt")
        return verdict_from(line)

    def command(self, line: str) -> str | None:
        name, _, argument = line.partition(" ")
        argument = argument.strip()
        handlers: dict[str, Callable[[str], str | None]] = {
            "/help": lambda _: self.view.help(COMMANDS),
            "/tools": lambda _: show_tools(self.console, self.runtime.tools.specs()),
            "/history": self._history,
            "/reset": self._reset,
            "/trace": self._trace_command,
            "/model": self._model_command,
            "/exit": lambda _: "exit",
            "/quit": lambda _: "exit",
        }
        handler = handlers.get(name)
        if handler is None:
            self.view.error(f"Unknown command {name}; try /help")
            self.unknown_commands += 1
            return None
        try:
            return handler(argument)
        except AgentError as exc:
            self.view.error(str(exc))
            return None

    def _history(self, _: str) -> None:
        turns = self.conversation.turns()
        self.view.history(self._memory(turns).recent(), len(turns))

    def _reset(self, _: str) -> None:
        """A new customer: a new conversation; the turns, who was identified and what was
        proposed, all gone (the conversation before stays in the store as it was)."""
        self.conversation.restart()
        if self.log is not None:
            self.log.session_id = self.id
        if self.runtime.identity is not None:
            self.runtime.identity.forget()
        self.view.note("Conversation forgotten.")

    def _trace_command(self, argument: str) -> None:
        if argument in ("", "off"):
            self.stop_trace()
            self.view.note("Trace stopped." if argument else "Usage: /trace FILE, or /trace off")
            return
        self.start_trace(Path(argument).expanduser())
        self.view.note(f"Tracing to {argument}")

    def _model_command(self, argument: str) -> None:
        if not argument:
            model = self.runtime.model
            self.view.note(f"Model: {model.provider}/{model.model}; /model NAME switches")
            return
        if self.runtime.model.provider in ("offline", "scripted"):
            raise UsageError(f"The {self.runtime.model.provider} model has no other models")
        provider = replace(self.options.provider, model=argument)
        options = replace(self.options, provider=provider)
        self.runtime = open_runtime(
            options,
            self.stack,
            settings=options.settings(),
            previous=self.runtime,
            notify=once_per_terminal(notice),
        )
        self.view.note(f"Model: {self.runtime.model.provider}/{self.runtime.model.model}")

    def start_trace(self, path: Path) -> None:
        handle = open_trace_file(path)  # TraceFileError (a usage error) if it cannot be opened
        self.stop_trace()
        self._trace = handle

    def stop_trace(self) -> None:
        if self._trace is not None:
            self._trace.close()
            self._trace = None

    def _record(self, event: Event) -> None:
        if self._trace is not None:
            TraceWriter(self._trace, session_id=self.id).write(event)


def chat(options: RunOptions, *, resume: bool | str = False) -> int:
    settings = options.settings()
    with ExitStack() as stack:
        session = Session(options, settings, stack, resume=resume)
        stack.callback(session.stop_trace)
        return session.loop()
