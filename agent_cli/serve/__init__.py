"""`agent serve`: the HTTP API over the runtime (starlette, the optional `serve` extra, imported
only by this package and only when the command runs). Conversations live in the store, so any
process on the same store answers any message (runtime/conversation.py)."""
