"""How the HTTP API says no: one JSON shape, `{"error": {"code", "message"}}`, with the status a
client acts on, for every error the runtime raises and every request the API refuses. Never a
traceback."""

from __future__ import annotations

from agent_cli.errors import (
    AgentError,
    ConversationBusy,
    ConversationClosed,
    ConversationNotFound,
    StoreError,
    UsageError,
)
from agent_cli.text import clean_text


class ApiError(Exception):
    """A request the API refuses: the HTTP status, a code a client matches on, and words."""

    def __init__(self, status: int, code: str, message: str, *, retry_after: int = 0) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after  # seconds, said in a Retry-After header when above 0

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.retry_after else {}

    def body(self) -> dict[str, object]:
        return {"error": {"code": self.code, "message": clean_text(self.message)}}


def from_agent_error(error: AgentError) -> ApiError:
    """The API's answer to an error of the runtime or the store."""
    message = str(error)
    match error:
        case ConversationNotFound():
            return ApiError(404, "not_found", message)
        case ConversationClosed():
            return ApiError(409, "closed", message)
        case ConversationBusy():  # held elsewhere past the wait: try again shortly
            return ApiError(409, "busy", message, retry_after=1)
        case StoreError():
            return ApiError(503, "store_unavailable", message, retry_after=5)
        case UsageError():  # the server's own settings (a request's fields are checked before)
            return ApiError(500, "configuration", message)
        case _:
            return ApiError(500, "internal", message)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "bad_request", message)
