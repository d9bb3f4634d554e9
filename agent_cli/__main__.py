"""`python -m agent_cli` runs the same CLI as the `agent` script."""

from agent_cli.cli import app

app(prog_name="agent")
