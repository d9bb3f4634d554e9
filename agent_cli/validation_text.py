"""Validation errors in words a user acts on: each bad setting or field, where it came from
(a file, a variable, an option by its name), a near miss for an unknown key, and Pydantic's
bound messages said plainly."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError


def _origin(where: str, sources: dict[str, str]) -> str | None:
    """Where a setting (or, for a bad table, any of its keys) came from."""
    source = sources.get(".".join(where.split(".")[:2]))
    if source is None:
        source = next((s for key, s in sources.items() if key.startswith(where + ".")), None)
    return "command line" if source == "option" else source


def describe_settings_error(
    error: ValidationError, sources: dict[str, str], model: type[BaseModel]
) -> str:
    """Each bad setting, where it came from (an option by its name), and what is wrong with it."""
    parts, by_option = [], True
    for item in error.errors(include_url=False):
        # A bad key of a table (a currency) is named by the key alone, not "key.[key]".
        where = ".".join(str(part) for part in item["loc"] if part != "[key]")
        origin = _origin(where, sources)
        message = (
            "unknown setting" + did_you_mean(model, item["loc"])
            if item["type"] == "extra_forbidden"
            else plain(item["msg"].removeprefix("Value error, "), item.get("input"))
        )
        option = OPTION_NAMES.get(where) if origin == "command line" else None
        by_option = by_option and option is not None
        if option is not None:
            value = item.get("input")
            shown = "" if isinstance(value, str) and repr(value) in message else f" {value}"
            parts.append(f"{option}{shown}: {message}")
        else:
            parts.append(f"{where} ({origin}): {message}" if origin else f"{where}: {message}")
    return ("Invalid option: " if by_option else "Invalid configuration: ") + "; ".join(parts)


# The settings an option of `ask`, `chat` or `eval` sets: its errors name the option.
OPTION_NAMES = {
    "limits.max_steps": "--max-steps",
    "limits.timeout": "--timeout",
    "limits.max_tokens": "--max-tokens",
    "limits.max_cost": "--max-cost",
    "provider.name": "--provider",
    "provider.model": "--model",
    "provider.base_url": "--base-url",
    "provider.mode": "--mode",
}
_PLAIN_BOUNDS = [
    (re.compile(r"^Input should be greater than or equal to (\S+)$"), r"must be at least \1"),
    (re.compile(r"^Input should be less than or equal to (\S+)$"), r"must be at most \1"),
    (re.compile(r"^Input should be greater than (\S+)$"), r"must be more than \1"),
    (re.compile(r"^Input should be less than (\S+)$"), r"must be less than \1"),
]


def plain(message: str, value: object) -> str:
    """Pydantic's bound messages in plain words; a NaN or an infinity is not a number."""
    if isinstance(value, float) and not math.isfinite(value):
        return "must be a number (not nan or inf)"
    for pattern, words in _PLAIN_BOUNDS:
        message = pattern.sub(words, message)
    return message


def near_miss(value: str, choices: Sequence[str]) -> str:
    """` (did you mean 'x'?)` for the closest of `choices` to a mistyped `value`, any case;
    or ''."""
    folded = {choice.casefold(): choice for choice in choices}
    close = difflib.get_close_matches(value.casefold(), list(folded), n=1, cutoff=0.6)
    return f" (did you mean {folded[close[0]]!r}?)" if close else ""


def did_you_mean(root: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """A near miss among the fields that exist where the unknown one was found (`loc` within
    `root`), as ` (did you mean 'x'?)`; or ''."""
    model: Any = root
    for part in loc[:-1]:
        if get_origin(model) is dict:  # a table of tables: this part is a key, e.g. a name
            model = get_args(model)[1]
            continue
        if get_origin(model) is list:  # an array of tables: this part is an index
            model = get_args(model)[0]
            continue
        is_model = isinstance(model, type) and issubclass(model, BaseModel)
        field = model.model_fields.get(str(part)) if is_model else None
        model = field.annotation if field is not None else None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return ""
    close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def describe_fields_error(error: ValidationError, model: type[BaseModel]) -> str:
    """One line naming each bad field of a `model` record (an unknown one with a near miss),
    without echoing the input."""
    parts = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "the record"
        if item["type"] == "extra_forbidden":
            message = "unknown key" + did_you_mean(model, item["loc"])
        else:
            message = plain(item["msg"].removeprefix("Value error, "), item.get("input"))
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


def status_filter(given: str | None, statuses: Sequence[str], noun: str) -> str | None:
    """A list command's `--status`, folded ("all" among the choices); None when not given.
    ValueError naming the choices (and a near miss) for any other word."""
    wanted = (given or "").strip().lower() or None
    choices = (*statuses, "all")
    if wanted is not None and wanted not in choices:
        raise ValueError(
            f"--status {given!r} is not a {noun} status{near_miss(wanted, choices)}; use "
            f"{', '.join(choices)}"
        )
    return wanted
