"""Lark's LALR parser over ``grammar/hlo.lark``, fed by this package's lexer: the reader of every
text the direct reader (``reader.py``) declines, and the one that words syntax errors. Imported
only then: Lark and its tables cost a noticeable share of a small run's start-up."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lark import Lark
from lark.lexer import Lexer

from .lexer import Source, Token, tokenize

# Package data (a link to the top-level grammar/ in a checkout, the file itself in a wheel).
GRAMMAR_PATH = Path(__file__).resolve().parents[2] / "grammar" / "hlo.lark"


def _grammar_text() -> str:
    # the package's own file when it lies on disk (importlib.resources costs ~10 ms of imports)
    try:
        return (Path(__file__).parent.parent / "grammar" / "hlo.lark").read_text(encoding="utf-8")
    except OSError:
        from importlib.resources import files

        return (files("hlo_index") / "grammar" / "hlo.lark").read_text(encoding="utf-8")


class HloLexer(Lexer):
    """Adapter so Lark can use :func:`tokenize` (Lark's custom-lexer interface 0)."""

    def __init__(self, lexer_conf: Any) -> None:
        pass

    def lex(self, data: str | Source) -> Iterator[Token]:  # type: ignore[override]  # interface 0 passes the text
        return tokenize(data if isinstance(data, Source) else Source(data))


def _table_cache() -> str | bool:
    """Where Lark keeps the analysed LALR tables between processes (it checks the grammar's and
    its own version's hash inside the file and rebuilds on a mismatch): a folder of this user's
    (never the shared temporary folder: the file is a pickle), or no cache when none is writable."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "hlo-index")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return False
    return os.path.join(folder, "hlo-grammar-tables.lalr") if os.access(folder, os.W_OK) else False


def lalr_parser(builder: object) -> Lark:
    """The parser, calling ``builder``'s methods (named after the grammar's rules) as it reduces."""
    return Lark(
        _grammar_text(),
        parser="lalr",
        lexer=HloLexer,
        transformer=builder,
        start=["start", "body", "shape"],
        maybe_placeholders=True,
        cache=_table_cache(),
    )
