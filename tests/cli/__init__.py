"""CLI tests: the commands as a user runs them (Typer's CliRunner, real processes, pseudo-
terminals)."""
