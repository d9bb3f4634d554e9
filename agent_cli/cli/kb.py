"""`agent kb import | list | show | search`."""

from pathlib import Path
from typing import Annotated

import typer

from agent_cli.cli._apps import kb_app
from agent_cli.cli._options import ConfigOption, JsonOption


@kb_app.command(name="import")
def kb_import(
    path: Annotated[
        Path, typer.Argument(help="A Markdown file, or a folder of them (.md, subfolders too).")
    ],
    config: ConfigOption = None,
    follow_links: Annotated[
        bool,
        typer.Option(
            "--follow-links",
            help="Import files that symbolic links lead to outside the folder (refused "
            "otherwise: customers are served what the folder holds).",
        ),
    ] = False,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="Make these the whole help centre: every other article is deleted, in the same "
            "transaction (the sample shop's six too).",
        ),
    ] = False,
) -> None:
    """Add help articles to the store, or update them: the first heading of each file is its
    title, the file name (without .md) its id. Every file is checked first; nothing is written
    unless all are good (exit code 2 naming the file otherwise)."""
    from agent_cli.commands.kb import import_kb

    import_kb(path, config=config, follow_links=follow_links, replace=replace)


@kb_app.command(name="delete")
def kb_delete(
    article_ids: Annotated[
        list[str], typer.Argument(help="The articles' ids, e.g. shipping-times.", metavar="ID...")
    ],
    config: ConfigOption = None,
) -> None:
    """Delete help articles: all of them, or none when one is not there (exit code 1)."""
    from agent_cli.commands.kb import delete_kb

    delete_kb(article_ids, config=config)


@kb_app.command(name="list")
def kb_list(json_output: JsonOption = False, config: ConfigOption = None) -> None:
    """List the help articles by id (piped: one tab-separated line each)."""
    from agent_cli.commands.kb import list_kb

    list_kb(json_output=json_output, config=config)


@kb_app.command(name="show")
def kb_show(
    article_id: Annotated[str, typer.Argument(help="The article's id, e.g. shipping-times.")],
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Show one article whole. Exit code 1 if there is no such article."""
    from agent_cli.commands.kb import show_kb

    show_kb(article_id, json_output=json_output, config=config)


@kb_app.command(name="search")
def kb_search(
    text: Annotated[str, typer.Argument(help="A question or words, English or Japanese.")],
    limit: Annotated[int, typer.Option(min=1, max=50, help="At most this many articles.")] = 3,
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Search the help centre as the search_help tool does: the best articles first, each with
    the passage that matched."""
    from agent_cli.commands.kb import search_kb

    search_kb(text, limit=limit, json_output=json_output, config=config)
