"""Every error agent-cli raises on purpose, split by who is at fault.

    AgentError                    exit 1: something failed at run time
    ├── UsageError                exit 2: the user's input or configuration is wrong
    │   ├── ConfigError               a setting or config file is invalid
    │   ├── ScriptFileError           a --script file is not a valid decision list
    │   ├── OrderFileError            an orders file to import is malformed
    │   ├── ArticleFileError          a help article's file (`agent kb import`) is malformed
    │   ├── TraceFileError            the trace file cannot be written
    │   ├── CaseFileError             an eval case file is malformed
    │   ├── MissingApiKey             the provider needs a key that is not set
    │   └── InvalidApiKey             the key holds whitespace or control characters inside
    ├── ModelError                exit 1: the reasoning model failed
    │   ├── ScriptExhausted           a scripted model ran out before a final answer
    │   ├── MalformedReply            one reply was unusable (caught by the loop: a repair)
    │   ├── RepairBudgetExceeded      the model kept producing unusable output
    │   └── ProviderError             the LLM service failed or refused the request
    │       ├── ProviderAuthError         401/403: the key was rejected or lacks permission
    │       ├── ProviderRequestError      400/404/413/422: the request was refused; not retried
    │       │   └── FeatureRejected           the server refused response_format or tools
    │       ├── ProviderBillingError      quota or spend limit reached; not retried
    │       ├── ProviderRateLimited       429 asking to wait longer than we will
    │       ├── ProviderUnavailable       5xx/529/connection errors after every retry
    │       └── InvalidProviderResponse   a reply that is not the expected JSON
    ├── StoreError                exit 1: the order database cannot be used
    │   ├── StoreBusy                 another process holds its lock past the time there is
    │   ├── StoreFull                 a write found the disk full (rolled back, nothing lost)
    │   └── StoreReadOnly             a write found the database read-only
    ├── RunLogError               exit 1: the log of runs (`agent logs`) cannot be read
    ├── OrderNotFound             exit 1: `agent orders show` found no such order
    ├── TicketNotFound            exit 1: `agent tickets` found no such ticket
    ├── ArticleNotFound           exit 1: `agent kb show` found no such article
    ├── TicketUnchanged           exit 1: a ticket claimed or closed already
    ├── ToolCallFailed            exit 1: `agent tools call`: the tool refused or failed
    ├── NeedsInput                exit 4: the model asked a question and nobody can answer
    ├── PendingApproval           exit 5: answered; a refund waits in the approval queue
    ├── HandedOver                exit 6: answered; a ticket is open for a person to follow up
    ├── LimitReached              exit 3: a circuit breaker stopped the run
    │   ├── MaxStepsExceeded
    │   ├── RunTimedOut
    │   ├── TokenBudgetExceeded
    │   ├── CostBudgetExceeded
    │   ├── NoProgress                the same call again and again
    │   └── Ungrounded                answers naming orders no tool looked up, past the repairs
    ├── EvalBelowTarget           exit 3: `agent eval`: a model passed fewer than --min-pass
    ├── ReplayDiffers             exit 3: `agent replay --check`: today's tools answer differently
    └── Interrupted               exit 130: the user pressed Ctrl-C

Messages are one line and say what to do next. Exceptions never print themselves: the CLI's
single error boundary turns them into one line on stderr and an exit code.
This module is stdlib-only so every layer can import it.
"""

from __future__ import annotations


class AgentError(Exception):
    """Base of every deliberate agent-cli error."""

    exit_code = 1
    label = "error"  # how the CLI introduces its message: "agent: error: ..."


class UsageError(AgentError):
    """The user's command line, files or configuration are wrong."""

    exit_code = 2


class ConfigError(UsageError):
    """A configuration file, environment variable or option value is invalid."""


class ScriptFileError(UsageError):
    """A --script file is unreadable, not JSON, or not a list of valid decisions."""


class OrderFileError(UsageError):
    """An orders file given to `agent orders import` is malformed."""


class ArticleFileError(UsageError):
    """A help article's file (`agent kb import`) that cannot be read as one."""


class TraceFileError(UsageError):
    """The trace file cannot be opened for writing."""


class CaseFileError(UsageError):
    """An `agent eval` case file is malformed; the message names the case and the field."""


class ModelError(AgentError):
    """The reasoning model failed to produce a decision."""


class ScriptExhausted(ModelError):
    """A scripted model was asked for more decisions than its script holds."""


class MissingApiKey(UsageError):
    """The selected provider needs an API key and its environment variable is empty."""


class InvalidApiKey(UsageError):
    """The key's variable holds something no HTTP header can carry; never quoted."""


class MalformedReply(ModelError):
    """The model's reply holds no usable decision. The loop feeds `problem` back (a repair)."""

    def __init__(self, problem: str, *, raw: str = "", usage: object = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.raw = raw
        self.usage = usage


class RepairBudgetExceeded(ModelError):
    def __init__(self, repairs: int, problem: str) -> None:
        super().__init__(
            f"The model's output was unusable {repairs} times (repair budget {repairs - 1}); "
            f"last problem: {problem}; try another model, or --mode json / --mode tools"
        )


class ProviderError(ModelError):
    """The LLM service failed; the message names the status and what to do."""


class ProviderAuthError(ProviderError):
    pass


class ProviderRequestError(ProviderError):
    pass


class FeatureRejected(ProviderRequestError):
    """The server refused an optional part of the request (`response_format`, `tools`): the
    adapter may try a plainer form; never retried as an overload."""

    def __init__(
        self, message: str, *, feature: str, status: int, attempt: int, latency_ms: float
    ) -> None:
        super().__init__(message)
        self.feature = feature
        self.status = status
        self.attempt = attempt
        self.latency_ms = latency_ms


class ProviderBillingError(ProviderError):
    pass


class ProviderRateLimited(ProviderError):
    pass


class ProviderUnavailable(ProviderError):
    pass


class InvalidProviderResponse(ProviderError):
    pass


class StoreError(AgentError):
    """The order database cannot be opened or queried."""


class StoreBusy(StoreError):
    """The database stayed locked by another process for as long as the run could wait."""


class StoreFull(StoreError):
    """A write found the disk full; the transaction was rolled back."""


class StoreReadOnly(StoreError):
    """A write found the database read-only; nothing was changed."""


class RunLogError(AgentError):
    """The log of runs exists but cannot be read (not SQLite, no permission, damaged)."""


class OrderNotFound(AgentError):
    """No order has the code the user asked for."""


class ArticleNotFound(AgentError):
    """No help article with that id."""


class TicketNotFound(AgentError):
    """`agent tickets`: no ticket has the number asked for."""


class TicketUnchanged(AgentError):
    """`agent tickets claim|close`: the ticket is claimed or closed already; nothing changed."""


class ConversationNotFound(AgentError):
    """No conversation has the id (or the first characters) given."""


class ConversationAmbiguous(ConversationNotFound):
    """The first characters given start more than one conversation's id."""


class ConversationClosed(AgentError):
    """A message to a conversation that is closed: nothing is answered in it any more."""


class ConversationBusy(AgentError):
    """Another process is answering a message of the same conversation; send again shortly."""


class ToolCallFailed(AgentError):
    """`agent tools call`: the tool refused or failed (an ERROR or DENIED observation)."""


class HandedOver(AgentError):
    """The run answered, and handed the customer over to a person: a ticket is open."""

    exit_code = 6
    status = "handed_over"
    label = "note"  # not a failure: the run answered, and a person follows up

    def __init__(self, tickets: list[int]) -> None:
        shown = ", ".join(f"#{ticket}" for ticket in tickets)
        super().__init__(
            f"Answered; handed over to a person: ticket {shown} is open (see it with 'agent "
            f"tickets show {tickets[0]}', take it with 'agent tickets claim {tickets[0]}')"
        )


class PendingApproval(AgentError):
    """The run answered, and left an action waiting in the approval queue."""

    exit_code = 5
    status = "pending_approval"
    label = "note"  # not a failure: the run answered

    def __init__(self, items: list[int]) -> None:
        shown = ", ".join(f"#{item}" for item in items)
        super().__init__(
            f"Answered; {len(items)} action(s) await approval ({shown}): see them with "
            f"'agent approvals list', decide with 'agent approvals approve {items[0]}' or 'deny'"
        )


class NeedsInput(AgentError):
    """The model asked a clarifying question with no one at a terminal to answer it."""

    exit_code = 4
    status = "needs_input"

    def __init__(self, question: str) -> None:
        super().__init__(
            f"The agent needs an answer: {question} (none was given: answer at the reply> "
            "prompt in a terminal, or put the answer in the question)"
        )
        self.question = question


class DeskAsked(NeedsInput):
    """`agent ask --conversation`: the desk asked the customer something; the next message of
    the conversation answers it (exit code 4, as any question no one answered)."""

    label = "note"  # not a failure: the conversation goes on

    def __init__(self, question: str, conversation: str) -> None:
        super().__init__(question)
        self.args = (
            f"The desk asked the customer; answer with: agent ask --conversation "
            f'{conversation[:8]} "..."',
        )


class LimitReached(AgentError):
    """A circuit breaker ended the run; `status` is what the trace records."""

    exit_code = 3
    status = "limit"


class MaxStepsExceeded(LimitReached):
    status = "max_steps"

    def __init__(self, max_steps: int) -> None:
        super().__init__(
            f"Max steps ({max_steps}) exceeded without a final answer; "
            "raise --max-steps or simplify the question"
        )
        self.max_steps = max_steps


class RunTimedOut(LimitReached):
    status = "timeout"

    def __init__(self, timeout_s: float) -> None:
        super().__init__(
            f"Run timed out after {timeout_s:g} s without a final answer; raise --timeout"
        )
        self.timeout_s = timeout_s


class TokenBudgetExceeded(LimitReached):
    status = "token_budget"

    def __init__(self, budget: int, used: int) -> None:
        super().__init__(
            f"Token budget ({budget:,}) would be exceeded: {used:,} used so far; "
            "raise --max-tokens or ask a narrower question"
        )


class CostBudgetExceeded(LimitReached):
    status = "cost_budget"

    def __init__(self, budget: float, spent: float) -> None:
        super().__init__(
            f"Cost budget ({budget:.4f}) would be exceeded: {spent:.4f} spent so far; "
            "raise --max-cost or ask a narrower question"
        )


class NoProgress(LimitReached):
    status = "no_progress"

    def __init__(self, tools: list[str], calls: int) -> None:
        if len(tools) == 1:
            what = f"called {tools[0]} with the same arguments {calls} times in a row"
        else:
            what = f"went round the same calls ({', '.join(tools)}) for {calls} calls"
        super().__init__(
            f"No progress: the model {what}; rephrase the question or try another model"
        )


class Ungrounded(LimitReached):
    status = "ungrounded"

    def __init__(self, problem: str) -> None:
        super().__init__(
            f"The model kept answering without the facts to back it: {problem}; "
            "try another model, or --no-grounding to accept such answers"
        )


class EvalBelowTarget(AgentError):
    """A quality bar was not met: exit 3, like a limit, but no run was cut short."""

    exit_code = 3


class ReplayDiffers(AgentError):
    """A replayed trace's observations differ from today's tools and store."""

    exit_code = 3


class Terminated(KeyboardInterrupt):
    """Raised by the SIGTERM handler, so a termination unwinds exactly like Ctrl-C does."""


class Interrupted(AgentError):
    """The user interrupted the run (Ctrl-C: exit 130) or it was terminated (SIGTERM: 143)."""

    status = "interrupted"

    def __init__(self, *, terminated: bool = False, kept_in: str | None = None) -> None:
        what = "Terminated (SIGTERM)" if terminated else "Interrupted"
        super().__init__(f"{what}; {kept_in} keeps every completed step" if kept_in else what)
        self.terminated = terminated
        self.exit_code = 143 if terminated else 130
