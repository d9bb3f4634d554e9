"""Help pages: each command's docstring reflowed, with its examples."""

from __future__ import annotations

import inspect
import re

import typer

EXAMPLES = {  # by the command's function
    "ask": [
        'agent ask "Is order A100 refundable?"',
        'agent ask "Is A101 refundable?" --provider ollama --model qwen2.5',
        'echo "Is A100 refundable?" | agent ask - --json',
    ],
    "chat": ["agent chat", "agent chat --continue", "agent chat --dry-run < questions.txt"],
    "eval_run": [
        "agent eval run --builtin --dry-run",
        "agent eval run cases.toml --model gpt-4o-mini --model gpt-4o --report report.html",
        "agent eval run --builtin --provider ollama --model qwen2.5:7b --trials 4",
    ],
    "eval_tau2": [
        "agent eval tau2 retail --provider reference",
        "agent eval tau2 tasks.json --store-file db.json --model gpt-4.1 --customer-model "
        "gpt-4.1 --trials 4 --max-cost 20",
    ],
    "eval_replay": ["agent eval replay runs/ --json"],
    "eval_list": ["agent eval list --builtin", "agent eval list cases.toml"],
    "replay": ["agent replay runs.jsonl --list", "agent replay runs.jsonl --check"],
    "doctor": ["agent doctor", "agent doctor --provider ollama"],
    "tools_group": ["agent tools --json", 'agent tools call track_order \'{"order_id": "A101"}\''],
    "tools_list": ["agent tools list --json"],
    "tools_call": [
        'agent tools call get_order_details \'{"order_id": "A101"}\'',
        "agent tools call issue_refund '{...}' --yes --as lead",
    ],
    "orders_export": ["agent orders export -o shop.json"],
    "tickets_list": ["agent tickets list", "agent tickets list --status all --json"],
    "kb_import": [
        "agent kb import help/",
        "agent kb import help/shipping-times.md",
        "agent kb import help/ --replace",
    ],
    "kb_delete": ["agent kb delete warranty", "agent kb delete warranty payment-methods"],
    "kb_list": ["agent kb list", "agent kb list --json"],
    "kb_show": ["agent kb show shipping-times"],
    "kb_search": ['agent kb search "how long does shipping take"', "agent kb search 返品"],
    "tickets_show": ["agent tickets show 3"],
    "conversations_start": [
        "agent conversations start --channel web",
        "agent conversations start --customer kaito_yamamoto_1007 --as shop-login",
    ],
    "conversations_list": [
        "agent conversations list",
        "agent conversations list --status all --json",
    ],
    "conversations_show": ["agent conversations show 80f7a3"],
    "conversations_close": ["agent conversations close 80f7a3 --as lead"],
    "serve": [
        "agent serve --port 8080",
        "agent serve --host 0.0.0.0 --config /etc/agent/agent.toml",
    ],
    "tokens_create": [
        "agent tokens create web-chat",
        "agent tokens create shop-login --scope identify",
    ],
    "tokens_list": ["agent tokens list --json"],
    "tokens_revoke": ["agent tokens revoke web-chat"],
    "tickets_claim": ["agent tickets claim 3 --as lead"],
    "tickets_close": [
        'agent tickets close 3 --note "Called back; refund explained"',
        "agent tickets close 3 --close-conversation",
    ],
    "tickets_reply": ['agent tickets reply 3 "I have sent a replacement; it arrives Friday."'],
    "orders_init": ["agent orders init --sample"],
    "orders_list": ["agent orders list --status DELIVERED", "agent orders list --json"],
    "orders_show": ["agent orders show A100"],
    "orders_import": ["agent orders import orders.csv"],
    "config_show": ["agent config show --json"],
    "config_init": ["agent config init"],
    "logs_list": ["agent logs list --status timeout --since 7d", "agent logs list --json"],
    "logs_report": ["agent logs report --since 7d --by day", "agent logs report --html desk.html"],
    "logs_show": ["agent logs show", "agent logs show 3f2a --json > run.jsonl"],
    "logs_search": ["agent logs search A100", 'agent logs search "refund window" -n 5'],
}


def _reflow(doc: str) -> str:
    """A docstring's paragraphs each on one line: this Typer keeps the source's line breaks in
    every paragraph but the first, which breaks the help text at odd places."""
    return "\n\n".join(" ".join(p.split()) for p in inspect.cleandoc(doc).split("\n\n"))


def _help_text(name: str, doc: str) -> str:
    examples = EXAMPLES.get(name, [])
    lines = "\n".join(f"  $ {example}" for example in examples)
    return _literal(_reflow(doc) + (f"\n\nExamples:\n{lines}" if lines else ""))


def _literal(text: str) -> str:
    """Help shown as written: Typer reads help as Rich markup, which would swallow a bracket
    (`[[refunds.rules]]` came out as `[]`); an escaped bracket is printed as itself."""
    return re.sub(r"(?<!\\)\[", r"\\[", text)


def add_help(*apps: typer.Typer) -> None:
    """Help text, from the docstring and EXAMPLES, for every command that has none given."""
    for group in apps:
        callback = group.registered_callback
        if not isinstance(group.info.help, str) and callback is not None and callback.callback:
            doc = callback.callback.__doc__ or ""
            callback.help = _help_text(callback.callback.__name__, doc)
        for command in group.registered_commands:
            if command.help is None and command.callback is not None and command.callback.__doc__:
                command.help = _help_text(command.callback.__name__, command.callback.__doc__)
