"""The process entry: the `agent` script and `python -m agent_cli` both run `main()`.

Start-up leaves a few hundred thousand long-lived objects (modules, classes, schemas). The
cyclic collector would sweep them again and again while they are imported, and once more at
exit, for nothing: about 45 ms of a 250 ms `agent ask`. So collection is off while the CLI is
imported, what survives is frozen (never scanned again), and everything is frozen once more
when the command returns, so the exit does not walk it. Nothing relies on the collector to be
written: every file, trace and connection is closed by its own `with` before a command returns.
Tests call `agent_cli.cli.app` in-process and keep the collector as it is.
"""

import gc


def main() -> None:
    gc.disable()
    from agent_cli.cli import app  # noqa: PLC0415 - imported with the collector off

    gc.freeze()
    gc.enable()
    try:
        app(prog_name="agent")
    finally:
        gc.freeze()


if __name__ == "__main__":
    main()
