"""MLIR text -> xDSL IR, with the SSA names as written and positioned errors.

xDSL is a real MLIR parser in pure Python: it parses the builtin, func, arith, affine, tensor
and linalg dialects as MLIR prints them; IREE's ``util.func`` / ``util.return`` come from
``util_dialect``. Ops of other dialects are accepted in MLIR's generic form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..hlo.diagnostics import error, line_of
from ..hlo.model import Diagnostic

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp


class MlirError(Exception):
    """MLIR text that does not parse or verify; ``diagnostic`` has path:line:col."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@dataclass
class ParsedModule:
    module: ModuleOp
    names: dict = field(default_factory=dict)  # SSAValue -> name as written (without %)
    text: str = ""

    def name(self, value) -> str:
        found = self.names.get(value)
        return found if found is not None else (value.name_hint or "?")

    def functions(self) -> list:
        from xdsl.dialects.func import FuncOp

        from .util_dialect import UtilFuncOp

        return [op for op in self.module.walk() if isinstance(op, (FuncOp, UtilFuncOp))]


def looks_like_mlir(text: str) -> bool:
    """MLIR rather than HLO text: a function in MLIR syntax before any ``HloModule`` header."""
    head = text[:20000]
    if "HloModule" in head.split("func.func")[0].split("util.func")[0]:
        return False
    return any(k in head for k in ("func.func", "util.func", "builtin.module")) or head.lstrip().startswith("module")


def _context():
    from xdsl.context import Context
    from xdsl.dialects import get_all_dialects

    from .util_dialect import Util

    ctx = Context(allow_unregistered=True)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    ctx.load_dialect(Util)
    return ctx


def parse_mlir(text: str, path: str = "<input>") -> ParsedModule:
    """Parse and verify; top-level functions without a ``module`` are wrapped in one."""
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import ParseError, VerifyException

    names: dict = {}

    class NamingParser(Parser):
        # xDSL keeps a name only when it is not numeric (``%0`` has none): keep them all, so
        # conditions and rewrites can name the values the user wrote.
        def _register_ssa_definition(self, name, values, span):
            super()._register_ssa_definition(name, values, span)
            for i, v in enumerate(values):
                names[v] = name if len(values) == 1 else f"{name}#{i}"

    open_string = _unterminated_string(text)
    if open_string is not None:
        line, col = open_string
        raise MlirError(error("unterminated string literal", line, col, path, line_of(text, line)))
    parser = None
    try:
        parser = NamingParser(_context(), text, name=path)  # it reads the first token
        module = parser.parse_module()
    except ParseError as e:
        loc = e.span.get_location()
        raise MlirError(
            error(e.msg.strip() or "syntax error", loc.line, loc.col, path, line_of(text, loc.line))
        ) from None
    except (VerifyException, ValueError, TypeError, KeyError, IndexError) as e:
        # an op whose attributes xDSL rejects while parsing it (non-contiguous reassociation...):
        # point at where the parser stopped
        if parser is None:
            raise MlirError(error(f"invalid IR: {e}", 1, 1, path, line_of(text, 1))) from None
        loc = parser._current_token.span.get_location()
        raise MlirError(error(f"invalid IR: {e}", loc.line, loc.col, path, line_of(text, loc.line))) from None
    from .slice_checks import slice_problems

    failure: VerifyException | None = None
    try:
        module.verify()
    except VerifyException as e:
        failure = e
    sliced_wrong = dict(slice_problems(module))
    if failure is not None or sliced_wrong:
        # the first op that fails, in the order MLIR's verifier meets them (each op's own checks
        # before the slice checks xDSL leaves out)
        for op in module.walk():
            message = None
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as e:
                message = str(e)
            if message is None:
                message = sliced_wrong.get(op)
            if message is not None:
                line, col = _position_of(op, names, text)
                raise MlirError(error(f"invalid IR: {message}", line, col, path, line_of(text, line) if line else ""))
        raise MlirError(error(f"invalid IR: {failure}", 0, 0, path, ""))
    return ParsedModule(module, names, text)


def _unterminated_string(text: str) -> tuple[int, int] | None:
    """(line, column) of the first string literal the line ends inside, or None. MLIR's strings
    end on their line; xDSL's lexer backtracks exponentially in the length of the rest of a line
    where one does not (a 1 KB module: minutes)."""
    for number, line in enumerate(text.split("\n"), 1):
        if '"' not in line:
            continue
        i, n = 0, len(line)
        while i < n:
            c = line[i]
            if c == "/" and line.startswith("//", i):
                break  # a comment to the end of the line
            if c == '"':
                start = i
                i += 1
                while i < n and line[i] != '"':
                    i += 2 if line[i] == "\\" else 1
                if i >= n:
                    return number, start + 1
            i += 1
    return None


def _position_of(op, names: dict, text: str) -> tuple[int, int]:
    """Line and column of ``op`` in ``text``: where its first result is defined, else the first
    occurrence of its op name; (0, 0) where neither is found."""
    needle = None
    if op.results and op.results[0] in names:
        needle = f"%{names[op.results[0]].split('#')[0]}"
        at = next(
            (i for i in _find_all(text, needle) if text[i + len(needle) :].lstrip().startswith(("=", ":", ","))),
            -1,
        )
    else:
        at = text.find(op.name)
    if at < 0:
        return 0, 0
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def _find_all(text: str, needle: str):
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)
