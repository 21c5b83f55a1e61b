"""The ``hlo-index`` command line: thin wrappers that call the library, render, pick the exit code.

Each subcommand lives in its own module ``hlo_index/cli/cmd_<name>.py`` exposing a click command
named ``command``; they are found and registered here.
"""
from __future__ import annotations

import importlib
import pkgutil

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="hlo-index")
def main() -> None:
    """Indexing analysis for XLA HLO: which input elements every output element reads."""


def _register_commands() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("cmd_"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            main.add_command(module.command)


_register_commands()
