"""Unit tests of agent_cli/providers/."""
