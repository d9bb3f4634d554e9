"""Unit tests of agent_cli/core/."""
