"""Computation bodies read on first use, by the process that needs them.

A GPU training step's dump is mostly fused computations (the A100 Pax step: 29,123 of its 37,026
instructions, 5.2 of its 8.8 MB), and reading them is most of the parse. Where a module's fusions
are shared among processes (``report.split_targets``), each fused body is needed by one of them
only: so the loader may leave those bodies unread (``loader.parse_checked``'s ``defer_bodies``),
and each is read, exactly as a read of the whole text reads it, when it is first used.

The loader's checks (``module_problems``) are made in parts: the module's own and its read
computations' at load (``check_read``), each deferred body's as it is read (with the bodies its
instructions call, which their checks read), by whichever process reads it. Every body is read
by some process before an answer is trusted (``read_rest``); where any part finds a problem, or a
body needs what only a read of the whole module gives, the module is read again, eagerly, and
analysed as it would have been (``DeferredBodyProblem``): the eager read words the problems.

A body is deferred where the direct reader reads its computation: a flat signature, not the
ENTRY, none of ``parser._READ_NOW`` in its text (so the scans of a whole module for its fusions,
its backend's markers or its async computations need no deferred body), closed by a ``}`` at the
start of a line.

A transformer's fused computations repeat under other names, and what an analysis asks of a
repeat's body is mostly its structure (to take the first one's figures). A body whose text is a
read, clean body's text with the names of its own instructions changed one for one (every other
name the same, or a callee's where the two callees are alike: the same signature, and texts the
same up to their own names, as XLA clones a reduction's region for each fusion) and other metadata
(each of which reads) is that body's twin (``twin_of``): it holds the same instructions, wired
the same, with the same shapes and attributes, so its structure is the other's and its checks
would find what the other's found, nothing (no check reads metadata but for reading it). Its
structure is then the other's without reading it, and it counts as checked (and so does an unread
callee alike the other's callee); anything else asked of it reads it.
"""

from __future__ import annotations

import re
from array import array
from typing import Any, NamedTuple

from .attributes import metadata
from .checks import check_computation, check_module_header, shared_async_computations
from .lexer import METADATA_ATTR, SIGNATURE_PARAMETER_SHAPE, LineIndex
from .model import Computation, DeferredComputation, Diagnostic, Instruction, Module, Shape
from .parser import DeferredReadError, read_deferred_body, resolve_source_locations
from .shape_checks import WrittenShapeChecks
from .validate import link_computation

# An instruction's name written with its '%' (as the lexer reads one; a split keeps it), and a
# name defined at the start of a line (a deferred body has one instruction a line; its text starts
# with a newline, that of the '{' line): a literal first character lets re skip to each line.
_PERCENT_NAME = re.compile(r"(%[\w.\-]+)", re.ASCII)
_DEFINED_NAME = re.compile(r"\n[ \t]*(?:ROOT[ \t]+)?(%[\w.\-]+)[ \t]*=", re.ASCII)
_NAME_MARK = "\x00"  # where a name was, in a body's text without its names (never in HLO text)
_METADATA_MARK = ", metadata=\x00"  # where a metadata attribute was


class _BodyText(NamedTuple):
    """A body's text as ``twin_of`` compares it: without its metadata and names (``unnamed``), the
    metadata taken out, the names in order, and the names its lines define."""

    unnamed: str
    values: list[str]
    names: list[str]
    defined: set[str]


def _body_text(body: str) -> _BodyText:
    """``body``'s text split once for its metadata and once for its names. The metadata stays in
    the text where a quote is left without it: a string that is not metadata could hold what
    reads as metadata, and what it holds would then not be compared. (A body's text starts with
    the newline after its '{', as ``_DEFINED_NAME`` needs.)"""
    values: list[str] = []
    parts = METADATA_ATTR.split(body)
    if len(parts) > 1:
        bare = _METADATA_MARK.join(parts[0::2])
        if '"' not in bare and "'" not in bare:
            body, values = bare, parts[1::2]
    pieces = _PERCENT_NAME.split(body)
    defined = set(_DEFINED_NAME.findall(body if body.startswith("\n") else "\n" + body))
    return _BodyText(_NAME_MARK.join(pieces[0::2]), values, pieces[1::2], defined)


def _metadata_reads(values: list[str]) -> bool:
    """Whether each metadata text reads (as the parser reads it, through the same memo)."""
    try:
        for value in values:
            metadata(value)
    except Exception:  # noqa: BLE001  whatever fails would fail the body's read: not a twin
        return False
    return True


class DeferredBodyProblem(Exception):
    """A module with deferred bodies is not as a whole read would give it: read it again, eagerly."""


class _Lines(LineIndex):
    """A line index kept while bodies wait: the newlines' offsets in a compact array."""

    def __init__(self, newlines: Any):  # the offsets given, not found in a text
        self.newlines = newlines


class DeferredBodies:
    """The unread bodies of one module's text: where each is (``found``), read on first use
    (``read_body``), and the text they are read from."""

    def __init__(self, text: str, lines: LineIndex, context: Any):
        self.text = text  # kept with the module: a body may be read, or the module read again, until it goes
        self.lines: LineIndex = _Lines(array("q", lines.newlines))
        self.context = context  # the analysis context of the read: its parse memos are shared
        self.unread: dict[Computation, tuple[int, int]] = {}
        self.extent: dict[str, tuple[int, int]] = {}  # every body's, by computation name
        self.literals: dict[tuple[Shape, str], str | None] = {}
        self.written = WrittenShapeChecks()  # shared by the checks of every part, as by one whole check
        self.read: set[Computation] = set()  # the bodies this process read
        self.failed = False  # a problem found, or a body read differently from a whole read
        # The bodies read and clean, for ``twin_of``: by their line count until a body of as many
        # lines asks (most never have a twin: their text is not looked at again), then by their
        # text without names: (the computation, its ``_body_text``).
        self.unkeyed: dict[int, list[tuple[Computation, int, int]]] = {}
        self.by_text: dict[str, tuple[Computation, _BodyText]] = {}
        self.keyed_lines: set[int] = set()  # the line counts of the bodies in ``by_text``
        self.twinned: set[Computation] = set()  # bodies left unread as twins of read ones
        self._missed: tuple[Computation, _BodyText] | None = None  # the last body found no twin
        self._computation_names: set[str] | None = None

    def found(self, comp: Computation, start: int, close: int, later: bool) -> None:
        """The reader met ``comp``'s body at ``text[start:close]``, to be read later or not."""
        self.extent[comp.name] = (start, close)
        if later:
            self.unread[comp] = (start, close)

    def pending(self) -> bool:
        return bool(self.unread)

    def unread_share(self) -> float:
        """The share of the text in bodies not read yet."""
        return sum(close - start for start, close in self.unread.values()) / max(len(self.text), 1)

    def lines_of(self, comp: Computation) -> int | None:
        """The lines between ``comp``'s braces less one: its instruction count where each
        instruction has a line, as XLA writes them (``read_body`` makes sure); None if unknown."""
        extent = self.extent.get(comp.name)
        return None if extent is None else self.text.count("\n", *extent) - 1

    def check_read(self, module: Module) -> bool:
        """The loader's checks of ``module`` as a whole and of its computations read so far (with
        the deferred bodies their instructions call, read now: their checks read them): True
        where they find nothing, and those computations need nothing only a whole module's checks
        give (a shape to infer) and have one instruction a line (``lines_of``)."""
        read = list(module.read_computations())
        for comp in read:
            if any(i.shape.element_type == "unknown" and i.shape.tuple_shapes is None for i in comp.instructions):
                return False
            lines = self.lines_of(comp)
            if lines is not None and lines != len(comp.instructions):
                return False
        try:
            for comp in read:
                self._read_callees(comp)
            problems: list[Diagnostic] = []
            check_module_header(module, problems)
            starts: list[Instruction] = []
            for comp in read:
                if comp not in self.read:
                    check_computation(comp, problems, starts)
                    self.written.check(comp, problems)
            problems += shared_async_computations(starts)
        except DeferredBodyProblem:
            return False
        return not problems and not self.failed

    def read_body(self, comp: Computation) -> None:
        """Read ``comp``'s body into it, link and check it (and the bodies it calls); ``comp`` is
        then a plain Computation. Where that cannot be done as a whole read does it, or the
        checks find a problem, ``failed`` is set (and stays: a caller may swallow the exception)
        and DeferredBodyProblem raised."""
        extent = self.unread.pop(comp, None)
        module = comp.module
        comp.__class__ = Computation
        comp.instructions, comp.root, comp.parameters, comp.by_name, comp.operands_above = [], None, {}, {}, False
        if extent is None or module is None:
            self.failed = True
            raise DeferredBodyProblem(f"the body of %{comp.name} cannot be read")
        try:
            comp.instructions = self.context.run(read_deferred_body, *extent, self.text, self.lines)
        except DeferredReadError:  # (any failure of the read is one)
            self.failed = True
            raise DeferredBodyProblem(f"the body of %{comp.name} needs the whole module read") from None
        self.read.add(comp)
        resolve_source_locations(module, comp)
        problems = link_computation(module, comp, self.literals)
        lines = self.lines_of(comp)
        if not problems and len(comp.instructions) == lines:
            self._read_callees(comp)
            starts: list[Instruction] = []
            check_computation(comp, problems, starts)
            self.written.check(comp, problems)
            if not problems and not starts:
                self._remember_text(comp, lines, *extent)
                return
        self.failed = True
        raise DeferredBodyProblem(f"the body of %{comp.name} is not as a whole read gives it")

    def twin_of(self, comp: Computation) -> Computation | None:
        """A body read and clean whose text is unread ``comp``'s with the names of its own
        instructions changed one for one, every other name (a callee's, or one it does not define)
        the same or a callee's alike (``_callee_alike``), none of its own names a computation's,
        and other metadata (each of ``comp``'s read): ``comp`` is then counted as checked. None
        where there is no such body."""
        extent = self.unread.get(comp)
        if extent is None:
            return None
        lines = self.lines_of(comp)
        if lines is None:
            return None
        for read, start, close in self.unkeyed.pop(lines, ()):
            self._keep(read, lines, _body_text(self.text[start:close]))
        if lines not in self.keyed_lines:
            return None
        mine = _body_text(self.text[extent[0] : extent[1]])
        hit = self.by_text.get(mine.unnamed)
        if hit is None:
            self._missed = (comp, mine)  # kept for its read, which follows
            return None
        twin, theirs = hit
        if not self._renamed_alike(mine, theirs, comp, allow_callees=True):
            return None
        if mine.values and not self.context.run(_metadata_reads, mine.values):
            return None
        self.twinned.add(comp)
        return twin

    def _renamed_alike(self, mine: _BodyText, theirs: _BodyText, comp: Computation, allow_callees: bool) -> bool:
        """Whether the names of ``mine`` (``comp``'s text) stand one for one where a read body's
        text ``theirs`` has its names: own names for own names, none a computation's, every other
        name the same, or, with ``allow_callees``, a callee's name where the read body names its
        callee and the two callees are alike (``_callee_alike``)."""
        names, defined, mine_defined = theirs.names, theirs.defined, mine.defined
        if len(mine.names) != len(names) or not mine_defined.isdisjoint(self._names_of_computations(comp)):
            return False
        pairs = set(zip(mine.names, names))
        if len(pairs) != len(set(mine.names)) or len(pairs) != len(set(names)):
            return False  # not one name for one name
        callees = []
        for a, b in pairs:
            if (a in mine_defined) is not (b in defined):
                return False  # an own name for another's
            if a != b and a not in mine_defined:
                callees.append((a, b))  # another name changed: alike callees only
        if callees and not allow_callees:
            return False
        return all(self._callee_alike(comp.module, a[1:], b[1:]) for a, b in callees)

    def _callee_alike(self, module: Module | None, mine: str, theirs: str) -> bool:
        """Whether computation %mine, called where a read body calls %theirs, is as that one: %theirs
        read and clean, the same signature (its shapes) and threads, and %mine's text %theirs's
        with its own names changed one for one and every other name the same (a callee's callees
        are not looked into), its metadata reading. An unread %mine then counts as checked (its
        checks would find what those of %theirs found: nothing)."""
        if module is None:
            return False
        a, b = module.by_name.get(mine), module.by_name.get(theirs)
        if a is None or b is None or b not in self.read or a.execution_thread != b.execution_thread:
            return False
        extent_a, extent_b = self.extent.get(mine), self.extent.get(theirs)
        if extent_a is None or extent_b is None:
            return False
        signature = self._signature(mine, extent_a)
        if signature is None or signature != self._signature(theirs, extent_b):
            return False
        text_a = _body_text(self.text[extent_a[0] : extent_a[1]])
        text_b = _body_text(self.text[extent_b[0] : extent_b[1]])
        if text_a.unnamed != text_b.unnamed or not self._renamed_alike(text_a, text_b, a, allow_callees=False):
            return False
        if text_a.values and not self.context.run(_metadata_reads, text_a.values):
            return False
        if a in self.unread:
            self.twinned.add(a)
        return True

    def _signature(self, name: str, extent: tuple[int, int]) -> tuple[list[str], str] | None:
        """The parameter and result shapes written in the header of computation %``name``, whose
        body is at ``extent``; None unless the header is one line (as dumps write it)."""
        start = self.text.rfind("\n", 0, extent[0]) + 1
        header = self.text[start : extent[0]]
        arrow = header.rfind("->")
        if arrow < 0 or not header.startswith(f"%{name}") or header[len(name) + 1 : len(name) + 2] not in " :":
            return None
        return SIGNATURE_PARAMETER_SHAPE.findall(header, 0, arrow), header[arrow:].strip()

    def _remember_text(self, comp: Computation, lines: int, start: int, close: int) -> None:
        """``comp``, read and clean, of ``lines`` instructions (``lines_of``), kept for
        ``twin_of``: its text looked at when a body of as many lines asks, or now where
        ``twin_of`` just looked at it."""
        missed = self._missed
        self._missed = None
        if missed is not None and missed[0] is comp:
            self._keep(comp, lines, missed[1])
        else:
            self.unkeyed.setdefault(lines, []).append((comp, start, close))

    def _keep(self, comp: Computation, lines: int, text: _BodyText) -> None:
        """``comp`` in ``by_text`` by its ``_body_text`` ``text``, unless an own name is a
        computation's: a callee's name is kept as it is, so the two must not be told apart by
        position."""
        if text.defined.isdisjoint(self._names_of_computations(comp)) and text.unnamed not in self.by_text:
            self.by_text[text.unnamed] = (comp, text)
            self.keyed_lines.add(lines)

    def _names_of_computations(self, comp: Computation) -> set[str]:
        if self._computation_names is None:
            module = comp.module
            self._computation_names = {f"%{c.name}" for c in module.computations} if module is not None else set()
        return self._computation_names

    def _read_callees(self, comp: Computation) -> None:
        """Read the deferred bodies ``comp``'s instructions call but a fusion's (``read_body``)."""
        for instr in comp.instructions:
            if instr.called and instr.opcode != "fusion":
                for callee in instr.called.values():
                    if type(callee) is DeferredComputation:
                        self.read_body(callee)

    def read_rest(self, read_elsewhere: set[str] | None = None) -> bool:
        """Read (and so check) every body not read yet, but those ``read_elsewhere`` (by name: by
        another process, which checked them): True where nothing failed here."""
        try:
            for comp in list(self.unread):
                if comp not in self.twinned and (read_elsewhere is None or comp.name not in read_elsewhere):
                    self.read_body(comp)
        except Exception:  # noqa: BLE001  anything unexpected: the module is read again, eagerly
            self.failed = True
        return not self.failed

    def names_read(self) -> set[str]:
        """The bodies this process read (each checked as it was), and their twins."""
        return {comp.name for comp in self.read} | {comp.name for comp in self.twinned}

    def read_again(self) -> str:
        """The text, for the eager read that replaces a module found unclean."""
        return self.text
