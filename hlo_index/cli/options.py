"""The options several commands share, declared once so that each reads and behaves the same
everywhere (``--format`` always lands in the parameter ``fmt``)."""

from __future__ import annotations

from collections.abc import Callable

import click

from .output import COLOR_CHOICES

color_option = click.option("--color", type=click.Choice(COLOR_CHOICES), default="auto", show_default=True)


def format_option(*extra: str, help: str | None = None) -> Callable:
    """``--format text|json`` (and the ``extra`` choices) into ``fmt``, text by default."""
    return click.option(
        "--format", "fmt", type=click.Choice(["text", "json", *extra]), default="text", show_default=True, help=help
    )


def jobs_option(help: str | None = None) -> Callable:
    """``--jobs/-j N``: worker processes, at least 1, one by default."""
    return click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True, help=help)
