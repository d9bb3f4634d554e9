"""Small builders shared by tests."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Generator, Iterable
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import httpx

from agent_cli.core.budget import Limits
from agent_cli.core.decisions import CallTool, FinalAnswer
from agent_cli.core.events import Event, QuestionAsked
from agent_cli.core.loop import run
from agent_cli.providers.http import Channel, Endpoint
from agent_cli.providers.retries import RetryPolicy
from agent_cli.providers.scripted import ScriptedModel
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools import ToolRegistry
from agent_cli.tools.orders import RefundPolicy, order_tools

TODAY = date(2026, 10, 13)


def registry(store: OrderStore, policy: RefundPolicy | None = None) -> ToolRegistry:
    return ToolRegistry(order_tools(lambda: store, policy or RefundPolicy()))


def call(tool: str, thought: str = "", **args: object) -> CallTool:
    return CallTool(tool=tool, args=dict(args), thought=thought)


def final(answer: str) -> FinalAnswer:
    return FinalAnswer(answer=answer)


def converse(events: Generator[Event, str | None, None], *replies: str) -> list[Event]:
    """Consume a run, answering each question with the next reply (None when they run out)."""
    answers = list(replies)
    seen: list[Event] = []
    try:
        event = next(events)
        while True:
            seen.append(event)
            if isinstance(event, QuestionAsked):
                event = events.send(answers.pop(0) if answers else None)
            else:
                event = next(events)
    except StopIteration:
        pass
    except Exception as exc:
        seen.append(exc)  # type: ignore[arg-type]
    return seen


def collect(events: Iterable[Event]) -> list[Event]:
    """Consume a run, keeping every event even when it ends by raising."""
    seen: list[Event] = []
    try:
        for event in events:
            seen.append(event)
    except Exception as exc:
        seen.append(exc)  # type: ignore[arg-type]
    return seen


def scripted_run(
    store: OrderStore, *decisions: CallTool | FinalAnswer, max_steps: int = 8
) -> tuple[ScriptedModel, list[Event]]:
    model = ScriptedModel(decisions)
    events = collect(
        run(
            "Is order A100 refundable?",
            model,
            registry(store),
            limits=Limits(max_steps=max_steps),
            today=TODAY,
        )
    )
    return model, events


def delivered_recently(code: str = "A100", days: int = 12) -> None:
    """Make a sample order in the test's database (AGENT_DB) delivered `days` before the system
    date: refunds are judged on the system date, whatever --today says."""
    import os
    from datetime import timedelta
    from pathlib import Path

    store = OrderStore.open(Path(os.environ["AGENT_DB"]))
    try:
        order = store.get(code)
        assert order is not None
        store.import_orders([replace(order, delivered_at=date.today() - timedelta(days=days))])
    finally:
        store.close()


def mock_channel(respond: Callable[[httpx.Request], httpx.Response]) -> Channel:
    """A Channel whose every request `respond` answers in process (no retries)."""
    return Channel(
        Endpoint(
            base_url="http://127.0.0.1:9",
            headers={},
            secret=None,
            key_env=None,
            connect_timeout=1,
            read_timeout=1,
            retry=RetryPolicy(max_retries=0),
        ),
        transport=httpx.MockTransport(respond),
    )


def json_lines(stdout: str) -> list[Any]:
    """`--json` output as the README documents it: one JSON object per line."""
    return [json.loads(line) for line in stdout.splitlines()]


def identify_for(code: str) -> dict[str, Any]:
    """A script's step identifying the sample shop's customer of order `code` (by email): in a
    conversation, money goes back only on the identified customer's own order."""
    from agent_cli.store.samples import SAMPLE_SHOP

    order = next(o for o in SAMPLE_SHOP.orders if o.code == code)
    customer = next(c for c in SAMPLE_SHOP.customers if c.id == order.customer_id)
    return {"type": "tool", "tool": "find_user_id_by_email", "args": {"email": customer.email}}


def consented_refund(args: dict[str, Any], proposal: str = "P1") -> list[dict[str, Any]]:
    """A script's steps refunding in a customer conversation: identify the order's customer,
    propose the refund (nothing moves), put it to the customer by its id, and call again after
    their yes (the reply the test feeds). Money moves only on the customer's yes to that refund."""
    refund = {"type": "tool", "tool": "issue_refund", "args": args}
    question = f"Shall I make change {proposal}, the refund on {args['order_code']}? yes or no"
    return [
        identify_for(args["order_code"]),
        refund,
        {"type": "ask_user", "question": question},
        refund,
    ]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium_dom(url: str, profile: Path, *, budget_ms: int, window: str | None = None) -> str:
    """The page's DOM after headless Chromium has run it for `budget_ms` of virtual time (which
    waits while requests are in flight)."""
    assert CHROMIUM is not None
    argv = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *([f"--window-size={window}"] if window else []),
        f"--virtual-time-budget={budget_ms}",
        "--dump-dom",
        url,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False).stdout


def write_script(tmp_path: Path, decisions: list[dict[str, Any]]) -> str:
    """A `--script` file of these decisions, its path."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps(decisions), encoding="utf-8")
    return str(path)
