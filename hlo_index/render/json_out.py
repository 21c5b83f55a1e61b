"""The ``--format json`` document of ``analyze`` (schema ``hlo-index/1``), written module by module.

A whole ENTRY computation of a big model has outputs x parameters operand entries (Llama 3.1 8B:
780,000 per direction, most of them "not read" or one shared UNDEFINED map), so entries are
written as text, never as one dict tree: each distinct per-operand figure object (memoised and
shared by the analyses) and each map list is encoded once, and an entry of a kind
(``OperandRows``) is its kind's text around its output. The text is exactly what ``json`` writes
for ``document(modules)`` (a test compares them).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterable, Sequence
from json.encoder import encode_basestring_ascii as _string

from ..report.model import (
    SCHEMA,
    EncodedElsewhere,
    ModuleReport,
    OperandReport,
    OperandRows,
    TargetReport,
    document,
)
from .sink import TextSink

# no indent: the C encoder, 10x faster on big dumps; each document is a fresh tree (no cycles)
_encode = json.JSONEncoder(check_circular=False).encode
_PIECES_PER_WRITE = 8192  # four a row
_ROWS_PER_WRITE = 2048


def render_json(modules: list[ModuleReport]) -> str:
    return _encode(document(modules))


class _Encoded:
    """Encoded JSON text of what operand entries share. Identity memos: each holds the objects it
    is keyed by, so no other live object can have their ``id``."""

    __slots__ = ("values", "strings", "heads", "tails", "_kept")

    def __init__(self) -> None:
        self.values: dict[int, tuple[object, str]] = {}
        self.strings: dict[str, str] = {}
        # an entry is head(operand) + output + tail(maps, figures): ~10^6 entries, ~10^3 of each
        self.heads: dict[tuple, str] = {}
        self.tails: dict[tuple, str] = {}
        self._kept: list = []

    def value(self, obj) -> str:
        hit = self.values.get(id(obj))
        if hit is None:
            hit = self.values[id(obj)] = (obj, _encode(obj))
        return hit[1]

    def string(self, text: str) -> str:
        hit = self.strings.get(text)
        if hit is None:
            hit = self.strings[text] = _string(text)
        return hit

    def head(self, key: tuple) -> str:
        operand, name, shape = key
        text = self.heads[key] = (
            f'{{"operand": {operand}, "operand_name": {self.string(name)}, '
            f'"operand_shape": {self.string(shape)}, "output": '
        )
        return text

    def parts(self, row: OperandReport) -> tuple[str, str]:
        """The text of ``row``'s entry before its output and after it."""
        key = (row.operand, row.operand_name, row.operand_shape)
        head = self.heads.get(key) or self.head(key)
        extra = row.extra
        # no figures (input-to-output rows, half of them): no unpacking
        tail_key = (
            (id(row.maps), row.deduplicated, *extra, *map(id, extra.values()))
            if extra
            else (id(row.maps), row.deduplicated)
        )
        return head, self.tails.get(tail_key) or self.tail(tail_key, row)

    def tail(self, key: tuple, row: OperandReport) -> str:
        self._kept.append((row.maps, tuple(row.extra.values())))  # their ids are in the key
        maps = ", ".join(self.value(m.to_json_cached()) for m in row.maps)
        text = f', "maps": [{maps}], "deduplicated": {"true" if row.deduplicated else "false"}'
        text += "".join(f", {self.string(k)}: {self.value(v)}" for k, v in row.extra.items())
        text = self.tails[key] = text + "}"
        return text


def _operand_kinds(rows: OperandRows, enc: _Encoded, out: TextSink) -> None:
    """The entries of ``rows`` from the text of each kind: an entry is its kind's head, its
    output and its kind's tail, laid into one list of pieces per write by whole columns."""
    parts = [enc.parts(template) for template in rows.templates]
    heads = [", " + head for head, _ in parts]  # every entry but the first follows a separator
    tails = [tail for _, tail in parts]
    kind_of, outputs = rows.kind_of, rows.outputs
    if not kind_of:
        out.write("[]")
        return
    for start in range(0, len(kind_of), _ROWS_PER_WRITE):
        kinds = kind_of[start : start + _ROWS_PER_WRITE]
        pieces = [""] * (3 * len(kinds))
        pieces[0::3] = map(heads.__getitem__, kinds)
        pieces[1::3] = map(str, outputs[start : start + len(kinds)])
        pieces[2::3] = map(tails.__getitem__, kinds)
        if start == 0:
            pieces[0] = "[" + pieces[0][2:]
        out.write("".join(pieces))
    out.write("]")


def _operands(rows: Sequence[OperandReport], enc: _Encoded, out: TextSink) -> None:
    if isinstance(rows, OperandRows) and rows.entries is None:
        _operand_kinds(rows, enc, out)
        return
    # each row's pieces go to the write as they are (an entry is ~1 KB of a shared tail): joined once
    pieces: list[str] = []
    append = pieces.append
    separator = "["
    for row in rows:
        head, tail = enc.parts(row)
        append(separator)
        append(head)
        append(str(row.output))
        append(tail)
        separator = ", "
        if len(pieces) >= _PIECES_PER_WRITE:
            out.write("".join(pieces))
            pieces.clear()
    if separator == "[":
        append("[")
    append("]")
    out.write("".join(pieces))


_OUT2IN, _IN2OUT = "\x00output_to_input\x00", "\x00input_to_output\x00"  # never in HLO names
_OUT2IN_TEXT, _IN2OUT_TEXT = _string(_OUT2IN), _string(_IN2OUT)


_COST, _COST_MARK = "cost", "\x00cost\x00"
_COST_MARK_TEXT = _string(_COST_MARK)


def _write_target(target: TargetReport, enc: _Encoded, out: TextSink, rank: int | None = None) -> None:
    """``target``'s JSON object (with ``rank`` its last key where one is given: ``--top``)."""
    if target.encoded is not None:  # encoded by a worker process (``report.split_targets``)
        target.encoded.write_to(out)
        return
    head = target.to_json(operands=False)
    head["output_to_input"], head["input_to_output"] = _OUT2IN, _IN2OUT
    # fusions equal in structure share one cost object: its text is encoded once
    cost = head.get(_COST)
    if cost is not None:
        head[_COST] = _COST_MARK
    before, rest = _encode(head).split(_OUT2IN_TEXT, 1)
    between, after = rest.split(_IN2OUT_TEXT, 1)
    if cost is not None:
        after = after.replace(_COST_MARK_TEXT, enc.value(cost), 1)
    if rank is not None:
        after = f'{after[:-1]}, "rank": {rank}}}'
    out.write(before)
    _operands(target.output_to_input, enc, out)
    out.write(between)
    _operands(target.input_to_output, enc, out)
    out.write(after)


def target_encoder() -> Callable[[TargetReport], str]:
    """A function giving one target's part of the document, as ``write_module`` writes it, with
    one memo for every target it encodes: what they share (the maps and figures of fusions equal
    in structure) is encoded once, as in ``write_module``."""
    enc = _Encoded()

    def encode(target: TargetReport) -> str:
        text = io.StringIO()
        _write_target(target, enc, text)
        return text.getvalue()

    return encode


def encode_module(module: ModuleReport, out: TextSink | None = None) -> str:
    """One module's part of the document, as ``write_json`` writes it; written to ``out`` as it is
    made where one is given (then the text returned is empty)."""
    if out is not None:
        write_module(module, out)
        return ""
    text = io.StringIO()
    write_module(module, text)
    return text.getvalue()


def write_module(mod: ModuleReport, out: TextSink, ranks: Sequence[int] | None = None) -> None:
    """One module's JSON object, written piece by piece (same text as ``_encode(mod.to_json())``;
    with ``ranks``, one per target, each target's object ends with its ``"rank"``)."""
    enc = _Encoded()
    out.write(f'{{"name": {_string(mod.name)}, "source": {_string(mod.source)}, "targets": [')
    for i, target in enumerate(mod.targets):
        if i:
            out.write(", ")
        _write_target(target, enc, out, ranks[i] if ranks is not None else None)
    out.write('], "diagnostics": ' + _encode([d.to_json() for d in mod.diagnostics]))
    out.write("".join(f", {_string(k)}: {_encode(v)}" for k, v in mod.extra.items()) + "}")


def write_json(modules: Iterable[ModuleReport], out: TextSink, top: int | None = None, sort: str = "bytes") -> None:
    """The same document as ``render_json``, streamed: one module's JSON at a time.

    With ``top``, each module keeps only the ``top`` heaviest targets by ``sort`` over all
    modules, in rank order, each with its ``rank`` (1 = heaviest); the document says
    ``"top": {"sort": ..., "limit": ..., "of": targets ranked}``.
    """
    if top is not None:
        _write_ranked(modules, out, top, sort)
        return
    out.write(f'{{"schema": "{SCHEMA}", "modules": [')
    for i, mod in enumerate(modules):
        if i:
            out.write(",")
        if mod.json_text is not None:  # encoded by a worker process (--jobs)
            out.write(mod.json_text)
        elif mod.json_file is not None:  # the same, in a file: copied out as a split run's targets are
            with mod.json_file as file:
                whole = EncodedElsewhere(0, 0, os.fstat(file.fileno()).st_size)
                whole.file = file
                whole.write_to(out)
            mod.json_file = None
        else:
            write_module(mod, out)
        if getattr(out, "broken", False):
            return
    out.write("]}\n")


def _write_ranked(modules: Iterable[ModuleReport], out: TextSink, top: int, sort: str) -> None:
    """``write_json``'s document with ``top`` (the text of ``_encode`` of that document). Each
    module is ranked as it comes and kept without its targets, so only the ``top`` heaviest
    targets so far are held, never a whole run; they are written as any target is, piece by piece
    (a whole ENTRY's target is ~10^6 rows)."""
    from ..report.triage import TopTargets

    ranking = TopTargets(top, sort)
    shells = []
    for mi, m in enumerate(modules):
        ranking.add(mi, m)
        shells.append(ModuleReport(m.name, m.source, diagnostics=m.diagnostics, extra=m.extra))
    picked = ranking.by_module()
    ranked_of = {"sort": sort, "limit": top, "of": ranking.ranked}
    out.write(f'{{"schema": "{SCHEMA}", "top": {_encode(ranked_of)}, "modules": [')
    for mi, shell in enumerate(shells):
        if mi:
            out.write(", ")
        mine = picked.get(mi, [])
        shell.targets = [t for _, t in mine]
        write_module(shell, out, [r for r, _ in mine])
        if getattr(out, "broken", False):
            return
    out.write("]}\n")
