"""A case's `answer_matches` patterns, searched in a child process with a time limit.

Python's `re` cannot be interrupted, and a pattern such as `^(a+)+$` takes exponential time on
an answer that almost matches: judged in the eval's own process it would hang it past every
timeout. So each search runs in one small child process (started at the first search, kept for
the next) and is given SEARCH_TIMEOUT_S; a search that runs over is a clear case failure, and the
child is killed and started afresh for the next.
"""

from __future__ import annotations

import atexit
import json
import selectors
import subprocess
import sys
import threading
from typing import IO

SEARCH_TIMEOUT_S = 5.0
START_TIMEOUT_S = 60.0  # for the child to start, on a busy machine; not part of a search

# The child: "ready" once started, then one JSON request per line, one answer per line ("1"
# found, "0" not).
_CHILD = """\
import json, re, sys
sys.stdout.write("ready\\n")
sys.stdout.flush()
for line in sys.stdin:
    request = json.loads(line)
    found = re.search(request["pattern"], request["text"]) is not None
    sys.stdout.write("1\\n" if found else "0\\n")
    sys.stdout.flush()
"""


class _Searcher:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # eval's workers judge at once; the child takes one
        self._child: subprocess.Popen[bytes] | None = None

    def search(self, pattern: str, text: str, timeout_s: float) -> bool | None:
        """Whether `pattern` is found in `text`; None when the search ran over `timeout_s`."""
        request = json.dumps({"pattern": pattern, "text": text}).encode() + b"\n"
        with self._lock:
            for _ in range(2):  # a child that died since its last search is started again
                child = self._started()
                assert child.stdin is not None and child.stdout is not None
                try:
                    child.stdin.write(request)
                    child.stdin.flush()
                except OSError:
                    self._stop()
                    continue
                answer = _answer(child.stdout, timeout_s)
                if answer in (b"1\n", b"0\n"):
                    return answer == b"1\n"
                self._stop()
                return None
            return None

    def _started(self) -> subprocess.Popen[bytes]:
        if self._child is None or self._child.poll() is not None:
            self._child = subprocess.Popen(
                [sys.executable, "-I", "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            assert self._child.stdout is not None
            _answer(self._child.stdout, START_TIMEOUT_S)  # the start is not a search's time
        return self._child

    def _stop(self) -> None:
        if self._child is not None:
            self._child.kill()
            self._child.wait()
            self._child = None

    def close(self) -> None:
        with self._lock:
            self._stop()


def _answer(stdout: IO[bytes], timeout_s: float) -> bytes:
    """The child's next line, or b'' when none comes within `timeout_s`."""
    with selectors.DefaultSelector() as waiting:
        waiting.register(stdout, selectors.EVENT_READ)
        ready = waiting.select(timeout_s)
    return stdout.readline() if ready else b""


_searcher = _Searcher()
atexit.register(_searcher.close)


def search(pattern: str, text: str, timeout_s: float = SEARCH_TIMEOUT_S) -> bool | None:
    """Whether the case's `pattern` is found in the answer; None when it took over `timeout_s`
    (catastrophic backtracking: the pattern needs simplifying)."""
    return _searcher.search(pattern, text, timeout_s)
