"""Unit tests of agent_cli/ui/."""
