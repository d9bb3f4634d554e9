"""The tool catalogue (domain/tool_catalogue.py) has one row for every tool the runtime
registers, and no row for a tool nobody registers; a write is a write wherever it is named."""

from __future__ import annotations

from agent_cli.config import load_settings
from agent_cli.core.budget import RefundCounter
from agent_cli.domain.intents import HAND_OVER, HELP_TOOLS, IDENTIFY
from agent_cli.domain.tool_catalogue import CATALOGUE, of_kind
from agent_cli.domain.write_tools import DESK_WRITES, WRITES
from agent_cli.runtime.assemble import build_tools
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools.offered import DESK, SEED


def registered() -> dict[str, str]:
    """Every tool of a run with refunds on (issue_refund registered too), by its Tool.kind."""
    store = OrderStore.in_memory()
    settings = load_settings(overrides={"refunds": {"enabled": True, "max_amount": 100}})
    tools = build_tools(settings, lambda: store, RefundCounter(), dry_run=True)
    return {tool.name: getattr(tool, "kind", "read") for tool in tools}


def test_every_registered_tool_has_a_row_and_every_row_a_tool() -> None:
    assert set(registered()) == set(CATALOGUE)


def test_a_tool_proposed_before_the_customers_yes_is_a_desk_write() -> None:
    proposed = {name for name, kind in registered().items() if kind == "write"}
    assert proposed == set(DESK_WRITES)
    assert set(of_kind("write")) == WRITES == {*DESK_WRITES, "issue_refund"}


def test_the_phases_name_tools_by_their_kind() -> None:
    assert set(IDENTIFY) == {"find_user_id_by_email", "find_user_id_by_name_zip"}
    assert (HAND_OVER, set(HELP_TOOLS)) == (
        "transfer_to_human_agents",
        {"search_help", "get_article"},
    )
    assert set(SEED) | set(DESK) == set(CATALOGUE)  # the offer knows every tool
