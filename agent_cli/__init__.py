"""agent-cli: a command-line support agent built on an observe-reason-act loop."""

from agent_cli._version import __version__

__all__ = ["__version__"]
