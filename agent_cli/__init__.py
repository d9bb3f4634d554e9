"""agent-cli: a command-line support agent built on an observe-reason-act loop."""

__version__ = "0.1.0"

__all__ = ["__version__"]
