"""Unit tests of agent_cli/evaluation/."""
