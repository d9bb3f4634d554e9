"""Unit tests of agent_cli/serve/."""
