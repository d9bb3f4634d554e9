"""Webhook signatures, checked before anything else is read: HMAC-SHA256 of the raw body (and,
where the channel signs one, a timestamp that must be recent, so a captured request cannot be
replayed later). Compared in constant time."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

MAX_AGE_S = 300  # a signed timestamp older (or further ahead) than this is refused


def hex_signature(secret: str, timestamp: str, body: bytes) -> str:
    """`sha256=` and the hex HMAC-SHA256 of `{timestamp}.{body}` (Chatwoot's, and the generic
    webhook's, scheme)."""
    signed = timestamp.encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def base64_signature(secret: str, body: bytes) -> str:
    """The base64 HMAC-SHA256 of the body (LINE's scheme)."""
    digest = hmac.new(secret.encode(), body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def timed_ok(
    secret: str, signature: str, timestamp: str, body: bytes, *, now: float | None = None
) -> bool:
    """Whether `signature` signs `body` at `timestamp` (seconds since the epoch) and the
    timestamp is within MAX_AGE_S of now."""
    try:
        age = abs((time.time() if now is None else now) - float(timestamp))
    except ValueError:
        return False
    if not age <= MAX_AGE_S:  # written so, NaN is not within it either
        return False
    return hmac.compare_digest(signature.encode(), hex_signature(secret, timestamp, body).encode())


def body_ok(secret: str, signature: str, body: bytes) -> bool:
    return hmac.compare_digest(signature.encode(), base64_signature(secret, body).encode())
