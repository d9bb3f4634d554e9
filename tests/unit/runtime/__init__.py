"""Unit tests of agent_cli/runtime/."""
