"""The ``hlo-index`` command line: thin wrappers that call the library, render, pick the exit code.

Each subcommand lives in its own module ``hlo_index/cli/cmd_<name>.py`` exposing a click command
named ``command``. Modules are found by file name and imported only when their command runs (or
``--help`` lists them), so one command does not pay for the imports of all the others.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys

import click

# numpy serves small per-operand figures here, never large linear algebra: one BLAS thread is
# enough, and OpenBLAS starting one thread per core costs ~0.05 s of CPU at import (a user's own
# setting wins).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Computations nest (a call of a call of ...), and the analyses recurse through them, about 12
# Python frames a level: Python's default limit (1,000) ends at ~80 levels. Python 3.11 keeps
# Python-to-Python calls off the C stack, so a higher limit is safe there: every command was run on
# a chain of 1,600 nested calls under this one. Deeper still is an internal error, never a crash;
# Python 3.10, whose every call takes C stack, keeps its own limit.
RECURSION_LIMIT = 20_000 if sys.version_info >= (3, 11) else sys.getrecursionlimit()


def _command_names() -> list[str]:
    # the file names themselves: pkgutil (what lists a package's modules) is not worth its import here
    return sorted(
        {
            name[4:-3]
            for directory in __path__
            for name in os.listdir(directory)
            if name.startswith("cmd_") and name.endswith(".py")
        }
    )


class _LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(_command_names()) | set(self.commands))

    def invoke(self, ctx: click.Context):
        # A reader that leaves early (`| head`) is not an error: stop writing, exit 0 (click would say 1).
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            from .output import silence_stdout

            silence_stdout()
            raise click.exceptions.Exit(0) from None

    def get_command(self, ctx: click.Context, cmd_name: str):
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in _command_names():
            command = importlib.import_module(f"{__name__}.cmd_{cmd_name}").command
            self.add_command(command, cmd_name)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="hlo-index")
def main() -> None:
    """Indexing analysis for XLA HLO: which input elements every output element reads."""
    # The parsed module is one big long-lived object graph that every full collection would
    # rescan (~10% of a big run); the driver collects between files instead. Re-enabled on exit
    # so in-process callers (tests) keep their collector.
    if gc.isenabled():
        gc.disable()
        click.get_current_context().call_on_close(gc.enable)
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)


def run() -> None:
    """The ``hlo-index`` program (console script and ``python -m hlo_index``): ``main``, then an
    immediate exit. A big run leaves ~10^6 objects that interpreter shutdown would free one by one
    (~0.1 s of CPU on a 5 MB dump, after the last byte is written); the process ends instead."""
    # The collector stays off to the end: the process exits below, and switching it back on
    # (what ``main`` does for in-process callers) would make the next allocation scan every
    # object the run made (~4% of a 125k-instruction dump's run).
    gc.disable()
    from ..context import free_when_next_starts

    free_when_next_starts()
    try:
        main(prog_name="hlo-index")
        code: str | int | None = 0
    except SystemExit as exc:
        code = exc.code
    exit_now(code)


def exit_now(code: str | int | None) -> None:
    """Flush the standard streams and end the process with ``code`` (SystemExit's conventions)."""
    if code is None:
        code = 0
    elif not isinstance(code, int):
        sys.stderr.write(f"{code}\n")
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that left (| head), a closed stream
            stream.flush()
    os._exit(code)
