"""Unit tests, one folder per package of agent_cli: a module's behaviour in process, without a
terminal or a server."""
