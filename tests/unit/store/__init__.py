"""Unit tests of agent_cli/store/."""
