"""Throwaway in-memory databases made by copying, not by building: an eval makes one per case
and trial (and a τ²-bench `db.json` is thousands of records, the sample shop a help centre to
index), so each seed is built once per process into a template, and each new store is a page
copy of it (SQLite's online backup), a fraction of the time. The few templates kept are the
latest seeds used."""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

KEPT = 4  # templates kept at once (an eval uses one or two)

_lock = threading.Lock()
_templates: OrderedDict[Hashable, tuple[object, sqlite3.Connection]] = OrderedDict()


def copied(
    key: Hashable, seed: object, build: Callable[[sqlite3.Connection], None]
) -> sqlite3.Connection:
    """A new in-memory database holding what `build` writes into an empty one for `seed`
    (`key` names the seed; a template is used only for the very same seed object)."""
    copy = sqlite3.connect(":memory:", isolation_level=None)
    with _lock:
        found = _templates.get(key)
        if found is None or found[0] is not seed:
            template = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            build(template)
            found = _templates[key] = (seed, template)
            while len(_templates) > KEPT:
                _templates.popitem(last=False)[1][1].close()
        _templates.move_to_end(key)
        found[1].backup(copy)
    return copy
