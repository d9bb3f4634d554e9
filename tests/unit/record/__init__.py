"""Unit tests of agent_cli/record/."""
