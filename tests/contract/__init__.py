"""Contract tests: the store's contract on both backends (SQLite and a real PostgreSQL), the
providers' wire formats against fake model servers on loopback, the MCP servers, the HTTP API
and its channels."""
