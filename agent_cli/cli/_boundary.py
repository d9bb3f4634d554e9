"""The one error boundary: every AgentError (and any Typer usage error) becomes one line on
stderr and a documented exit code, never a traceback; SIGTERM unwinds like Ctrl-C, then 143."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperArgument, TyperGroup

from agent_cli.core import interrupts
from agent_cli.errors import AgentError, Interrupted

EXIT_CODES_HELP = (
    "Exit codes: 0 answered; 1 runtime error; 2 usage or configuration error; "
    "3 a limit was reached (max steps, timeout, tokens); 4 the agent asked a question and no "
    "one could answer; 5 answered, and a refund waits in the approval queue; 6 answered, and "
    "handed over to a person (a ticket is open); 130 interrupted "
    "(Ctrl-C); 141 stdout closed by its reader; 143 terminated (SIGTERM)."
)


def _fail(message: str, label: str = "error") -> None:
    # Messages quote servers and models: a hostile one must not drive the terminal.
    from agent_cli.text import clean_text, mask_secrets

    # ... and may quote a URL with credentials in it (--base-url https://user:pass@host).
    print(f"agent: {label}: {clean_text(mask_secrets(message))}", file=sys.stderr, flush=True)


class AgentGroup(TyperGroup):
    """The top-level command, wrapped in the single error boundary."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        _name_values(self)
        code = _guarded(
            lambda: super(AgentGroup, self).main(
                args, "agent", complete_var, standalone_mode=False, **extra
            )
        )
        if standalone_mode:
            sys.exit(code)
        return code


def _name_values(command: Any) -> None:
    """Metavars for the help pages: none for a flag, NAME-like words for values (Typer's own
    are type names: `<bool>`, `<str>`)."""
    for parameter in getattr(command, "params", []):
        if parameter.metavar is None:
            parameter.metavar = (
                "" if getattr(parameter, "is_flag", False) else parameter.name.upper()
            )
        if isinstance(parameter, TyperArgument):  # its name is the metavar: no type beside it
            setattr(parameter, "display_type_rich", lambda ctx: None)  # noqa: B010
            shown = parameter.metavar if parameter.required else f"[{parameter.metavar}]"
            setattr(parameter, "_usage_display_name", lambda shown=shown: shown)  # noqa: B010
    original = command.get_help_option  # made on first use: a flag too

    def help_option(ctx: Any, original: Any = original) -> Any:
        option = original(ctx)
        if option is not None:
            option.metavar = ""
        return option

    setattr(command, "get_help_option", help_option)  # noqa: B010
    for sub in getattr(command, "commands", {}).values():
        _name_values(sub)


def _guarded(call: Any) -> int:
    interrupts.reset()
    if threading.current_thread() is threading.main_thread():
        interrupts.quiet_signal_races()
        signal.signal(signal.SIGTERM, interrupts.on_sigterm)
    try:
        return _exit_code(call)
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _exit_code(call: Any) -> int:  # noqa: PLR0911 - one return per kind of ending
    try:
        result = call()
    except AgentError as exc:
        _fail(str(exc), exc.label)
        return _code_of(exc)
    except typer.Abort:
        _fail("aborted")
        return 1
    except BrokenPipeError:  # `agent ... | head`: the reader left; stop quietly, as cat does
        _silence_stdout()
        return 141
    except SystemExit as exc:  # Click turns a broken pipe into exit 1; it is not an error
        if isinstance(exc.__context__, BrokenPipeError):
            _silence_stdout()
            return 141
        raise
    except typer.TyperException as exc:  # Click's usage errors: bad option, missing argument...
        return _usage_error(exc)
    except Exception as exc:
        if os.environ.get("AGENT_DEBUG"):
            raise
        _fail(f"internal error ({type(exc).__name__}: {exc}); set AGENT_DEBUG=1 for details")
        return 1
    if interrupts.terminated():  # outside a run Typer turns it into a plain exit: say so
        _fail("Terminated (SIGTERM)")
        return 143
    return result if isinstance(result, int) else 0


def _code_of(exc: AgentError) -> int:
    if isinstance(exc, Interrupted) and interrupts.terminated():
        return 143  # a SIGTERM held while a Ctrl-C's run was ending still decides
    return exc.exit_code


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _usage_error(exc: typer.TyperException) -> int:
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError":  # the help was printed as it was raised
        return 2
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    _fail(exc.format_message().rstrip(".") + hint)
    return getattr(exc, "exit_code", 2)
