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


AUTO_JOBS = 0  # ``--jobs auto``: see ``report.driver.iter_reports``


class _Jobs(click.ParamType):
    """A count of worker processes, at least 1, or ``auto`` (``AUTO_JOBS``)."""

    name = "N|auto"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or value == "auto":
            return AUTO_JOBS if value == "auto" else value
        try:
            count = int(value)
        except ValueError:
            count = 0
        if count < 1:
            self.fail(f"{value!r} is not a count of processes (1 or more) or 'auto'", param, ctx)
        return count


def jobs_option(help: str | None = None, auto: bool = False) -> Callable:
    """``--jobs/-j N``: worker processes, at least 1, one by default; with ``auto``, ``auto`` is
    accepted and is the default (the driver decides, ``report.driver.iter_reports``)."""
    if auto:
        return click.option(
            "--jobs", "-j", type=_Jobs(), default="auto", show_default=True, metavar="N|auto", help=help
        )
    return click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True, help=help)
