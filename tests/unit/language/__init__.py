"""Unit tests of agent_cli/language/."""
