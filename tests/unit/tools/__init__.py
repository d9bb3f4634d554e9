"""Unit tests of agent_cli/tools/."""
