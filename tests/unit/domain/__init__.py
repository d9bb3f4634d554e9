"""Unit tests of agent_cli/domain/."""
