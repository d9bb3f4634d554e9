"""The bodies of the CLI's commands, free of Typer: `cli/` parses options and calls in here;
errors are raised as AgentError for its one boundary."""
