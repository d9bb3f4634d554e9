"""Rich rendering of loop events and command output. The only package that imports Rich."""

from agent_cli.ui.console import clean_text, make_console
from agent_cli.ui.run_view import RunView
from agent_cli.ui.tables import (
    show_checks,
    show_logged_runs,
    show_order,
    show_orders,
    show_run_header,
    show_runs,
    show_settings,
    show_tools,
)

__all__ = [
    "RunView",
    "clean_text",
    "make_console",
    "show_checks",
    "show_logged_runs",
    "show_order",
    "show_orders",
    "show_run_header",
    "show_runs",
    "show_settings",
    "show_tools",
]
