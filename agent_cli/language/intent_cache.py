"""The trained intent model, kept on disk: training takes seconds, loading a few hundredths, and
the seed's one-question process must not get slower. The package ships the model of its own
corpus (`trained/`, written by scripts/train_intents.py and checked by a test), so only a
shop's own examples are ever trained on a user's machine, once, then cached. A model file
is named by a digest of everything the model is trained from (the model's version and settings,
the bytes of every corpus file), so a new corpus, a shop's new examples or a new release trains
afresh without parsing anything to find out; its first line is a checksum of the rest, so a
damaged or half-written file is retrained, never read. Nothing here is required: when the
cache folder cannot be written, the model is trained in memory."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from agent_cli.language import intent_model
from agent_cli.language.intent_model import IntentModel

_PREFIX = "intents-"
_KEEP = 4  # models kept in the folder (the package's, a shop's, the previous release's...)


def load_or_train(
    sources: Sequence[bytes],
    train: Callable[[], IntentModel],
    folder: Path,
    *,
    shipped: Path | None = None,
) -> IntentModel:
    """The model trained from `sources` (every corpus file's bytes): the shipped one or the
    cached one when a folder holds it, else `train()`'s, then cached."""
    name = file_name(sources)
    for known in (shipped, folder):
        found = _read(known / name) if known is not None else None
        if found is not None:
            return found
    model = train()
    _write(folder / name, model)
    return model


def file_name(sources: Sequence[bytes]) -> str:
    """The name of the model file trained from `sources` (and the model's settings)."""
    return f"{_PREFIX}{_digest(sources)}.json"


def ship(sources: Sequence[bytes], model: IntentModel, folder: Path) -> Path:
    """Write the package's model into `folder`, alone (scripts/train_intents.py)."""
    path = folder / file_name(sources)
    for old in folder.glob(f"{_PREFIX}*.json"):
        old.unlink()
    _write(path, model)
    path.chmod(0o644)  # read by every user of an installed package
    return path


def _digest(sources: Sequence[bytes]) -> str:
    settings = intent_model.SETTINGS
    digest = hashlib.sha256(repr(settings).encode())
    for source in sources:
        digest.update(hashlib.sha256(source).digest())
    return digest.hexdigest()[:24]


def _read(path: Path) -> IntentModel | None:
    try:
        checksum, _, body = path.read_bytes().partition(b"\n")
        if checksum.decode("ascii") != hashlib.sha256(body).hexdigest():
            return None
        return IntentModel.from_state(json.loads(body))
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        return None  # missing, damaged or not ours: trained again


def _write(path: Path, model: IntentModel) -> None:
    """Written whole or not at all (a temporary file renamed), all but the folder's newest few
    models removed; a folder that cannot be written is no error."""
    body = json.dumps(model.state(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".intents", suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(hashlib.sha256(body).hexdigest().encode("ascii") + b"\n" + body)
        os.replace(temporary, path)
    except OSError:
        return
    for old in _by_age(path.parent)[_KEEP:]:
        with contextlib.suppress(OSError):
            old.unlink()


def _by_age(folder: Path) -> list[Path]:
    """The folder's cached models, the newest first."""
    found = []
    for path in folder.glob(f"{_PREFIX}*.json"):
        with contextlib.suppress(OSError):
            found.append((path.stat().st_mtime, path))
    return [path for _, path in sorted(found, reverse=True)]
