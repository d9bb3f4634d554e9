"""Unit tests of agent_cli/policy/."""
