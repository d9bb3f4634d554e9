"""agent-cli: a support agent built on an observe-reason-act loop, as a command (`agent`) and as
a Python API for teams that embed it (a help-desk webhook, a bot):

    import agent_cli

    result = agent_cli.ask("Is order A100 refundable?")
    print(result.status, result.answer)

    for event in agent_cli.iter_events("Where is order A101?", provider="ollama"):
        print(event.kind)

    conversation = agent_cli.Conversation.start(channel="web")  # kept in the store
    turn = conversation.say("Where is my order? noah.kim@example.com", message_id="m-1")

The names below are imported on first use, so `import agent_cli` (and `agent --help`) stays
light; see docs/python-api.md.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from agent_cli._version import __version__

if TYPE_CHECKING:
    from agent_cli.core.events import (
        ApprovalDecided,
        ApprovalRequested,
        Event,
        ModelCalled,
        ModelDecided,
        QuestionAsked,
        RepairRequested,
        RunFinished,
        RunStarted,
        ToolObserved,
    )
    from agent_cli.errors import AgentError
    from agent_cli.runtime.api import Options, RunResult, ask, iter_events
    from agent_cli.runtime.conversation import DeskReply, Turn
    from agent_cli.runtime.converse import Conversation, converse

__all__ = [
    "AgentError",
    "ApprovalDecided",
    "ApprovalRequested",
    "Conversation",
    "DeskReply",
    "Event",
    "ModelCalled",
    "ModelDecided",
    "Options",
    "QuestionAsked",
    "RepairRequested",
    "RunFinished",
    "RunResult",
    "RunStarted",
    "ToolObserved",
    "Turn",
    "__version__",
    "ask",
    "converse",
    "iter_events",
]

# Where each public name lives; imported on first use.
_WHERE = {
    "ask": "agent_cli.runtime.api",
    "iter_events": "agent_cli.runtime.api",
    "RunResult": "agent_cli.runtime.api",
    "Options": "agent_cli.runtime.api",
    "Conversation": "agent_cli.runtime.converse",
    "converse": "agent_cli.runtime.converse",
    "Turn": "agent_cli.runtime.conversation",
    "DeskReply": "agent_cli.runtime.conversation",
    "AgentError": "agent_cli.errors",
    "Event": "agent_cli.core.events",
    "RunStarted": "agent_cli.core.events",
    "ModelCalled": "agent_cli.core.events",
    "ModelDecided": "agent_cli.core.events",
    "RepairRequested": "agent_cli.core.events",
    "QuestionAsked": "agent_cli.core.events",
    "ApprovalRequested": "agent_cli.core.events",
    "ApprovalDecided": "agent_cli.core.events",
    "ToolObserved": "agent_cli.core.events",
    "RunFinished": "agent_cli.core.events",
}


def __getattr__(name: str) -> Any:
    """The public names, imported when first asked for (PEP 562)."""
    if name not in _WHERE:
        raise AttributeError(f"module 'agent_cli' has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name]), name)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
