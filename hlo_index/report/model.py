"""Plain-data reports of an analysis: what the text and JSON renderers draw.

Reports hold map *text*, not map objects, so they pickle cheaply across worker processes and the
renderers never need the map engine. Per-operand and per-target figures (utilization, coalescing,
physical maps, findings, source) are filled into the ``extra`` dicts by the figure builders that
``build.TARGET_FIGURES`` lists; both renderers show them and the JSON output merges them into
the operand / target objects. ``to_json`` gives each object's part of the published document.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

SCHEMA = "hlo-index/1"


@dataclass(slots=True)
class MapReport:
    """One indexing map, as text (None with the reason when it is undefined)."""

    text: str | None  # XLA map text ("KNOWN EMPTY" for the empty map)
    unknown: str | None = None  # the reason, when the map is UNDEFINED
    _json: dict | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict:
        if self.text is None:
            return {"map": None, "unknown": self.unknown or "unknown"}
        return {"map": self.text}

    def to_json_cached(self) -> dict:
        """``to_json()``, one dict per report (reports are shared between operand entries)."""
        if self._json is None:
            self._json = self.to_json()
        return self._json


@dataclass(slots=True)
class OperandReport:
    """The distinct maps between one operand and one output of a target."""

    operand: int
    operand_name: str
    operand_shape: str
    output: int
    maps: list[MapReport]
    deduplicated: bool
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def distinct(self) -> int:
        return len(self.maps)

    @property
    def known(self) -> bool:
        return bool(self.maps) and all(m.text is not None for m in self.maps)

    @property
    def reads_nothing(self) -> bool:
        """Whether the output reads no element of the operand (no map, or only the empty one):
        a figure of the operand's over the whole fusion says nothing of this output."""
        return all(m.text == "KNOWN EMPTY" for m in self.maps)

    def to_json(self) -> dict:
        out = {
            "operand": self.operand,
            "operand_name": self.operand_name,
            "operand_shape": self.operand_shape,
            "output": self.output,
            "maps": [m.to_json() for m in self.maps],
            "deduplicated": self.deduplicated,
        }
        out.update(self.extra)
        return out


class OperandRows(Sequence[OperandReport]):
    """A target's operand entries in one direction, stored by kind: entries that differ only in
    their ``output`` share one template ``OperandReport`` (its ``output`` is one of theirs).

    A whole ENTRY has ~10^6 entries over a few thousand kinds (most of them "not read"): figures
    are computed once per kind (``templates``), and the JSON writer encodes each kind's text once.
    Indexing or iterating makes the entries themselves, once, as independent objects (their
    ``extra`` a copy of the template's), which then stand for the rows: ``entries`` is not None.
    """

    __slots__ = ("templates", "kind_of", "outputs", "samples", "entries")

    def __init__(self, templates: list[OperandReport], kind_of: list[int], outputs: list[int], samples: list[int]):
        self.templates = templates
        self.kind_of = kind_of  # per entry: the index of its template
        self.outputs = outputs  # per entry: its output
        self.samples = samples  # per template: the index of an entry of its kind
        self.entries: list[OperandReport] | None = None

    def made(self) -> list[OperandReport]:
        """The entries as objects (made on first use; changes to them stay)."""
        if self.entries is None:
            templates = self.templates
            self.entries = [_entry(templates[k], output) for k, output in zip(self.kind_of, self.outputs)]
        return self.entries

    def views(self) -> list[OperandReport]:
        """Per entry, its operand, maps and figures without making the entries: the entries once
        made, else each one's template, whose ``output`` is not the entry's (for readers that
        never look at it)."""
        if self.entries is not None:
            return self.entries
        templates = self.templates
        return [templates[k] for k in self.kind_of]

    def __len__(self) -> int:
        return len(self.kind_of)

    @overload
    def __getitem__(self, index: int) -> OperandReport: ...

    @overload
    def __getitem__(self, index: slice) -> list[OperandReport]: ...

    def __getitem__(self, index):
        return self.made()[index]

    def __iter__(self) -> Iterator[OperandReport]:
        return iter(self.made())

    def __add__(self, other: Sequence[OperandReport]) -> list[OperandReport]:
        return [*self.made(), *other]

    def __radd__(self, other: Sequence[OperandReport]) -> list[OperandReport]:
        return [*other, *self.made()]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, OperandRows):
            return self.made() == other.made()
        return isinstance(other, list) and self.made() == other

    # mutable, like a list: no hash
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"OperandRows({self.made()!r})"


def entry_views(rows: Sequence[OperandReport]) -> list[OperandReport] | Sequence[OperandReport]:
    """``rows`` for a reader of operands, maps and figures only (``OperandRows.views``): by
    kind rows are not made one by one for it."""
    return rows.views() if type(rows) is OperandRows else rows


def _entry(template: OperandReport, output: int) -> OperandReport:
    t = template
    return OperandReport(t.operand, t.operand_name, t.operand_shape, output, t.maps, t.deduplicated, dict(t.extra))


class EncodedElsewhere:
    """A target's JSON text as a process sharing a module's targets wrote it (``split_targets``):
    ``length`` bytes of UTF-8 at ``offset`` of process ``worker``'s file (0: the parent's), which
    the parent names once the report is back (``file``). Read when the document is written, so
    the text is never held whole."""

    __slots__ = ("worker", "offset", "length", "file")

    def __init__(self, worker: int, offset: int, length: int) -> None:
        self.worker, self.offset, self.length = worker, offset, length
        self.file: Any = None

    def __getstate__(self) -> tuple[int, int, int]:
        return self.worker, self.offset, self.length

    def __setstate__(self, state: tuple[int, int, int]) -> None:
        self.worker, self.offset, self.length = state
        self.file = None

    def text(self, start: int = 0) -> str:
        """The text, from its byte ``start`` on."""
        offset, length = self.offset + start, self.length - start
        data = os.pread(self.file.fileno(), length, offset)
        while len(data) < length:  # a short read: the rest
            more = os.pread(self.file.fileno(), length - len(data), offset + len(data))
            if not more:
                raise OSError(f"the worker's file ends {length - len(data)} bytes short")
            data += more
        return data.decode()

    def write_to(self, out: Any) -> None:
        """The text written to ``out``: copied from file to file where ``out`` can
        (``copy_range``, the CLI's stream to a file or a pipe), else read and written as text."""
        copy = getattr(out, "copy_range", None)
        done = copy(self.file, self.offset, self.length) if copy is not None else 0
        if done < self.length:
            out.write(self.text(done))


@dataclass(slots=True)
class TargetReport:
    """What is reported of one target: its outputs, the maps of each operand, its figures."""

    kind: str  # "instruction" | "fusion" | "computation"
    name: str
    opcode: str | None
    computation: str | None  # where the instruction lives; the computation itself for kind computation
    fusion_kind: str | None
    outputs: list[tuple[int, str]]  # (output index, shape text)
    output_to_input: Sequence[OperandReport] = field(default_factory=list)
    input_to_output: Sequence[OperandReport] = field(default_factory=list)
    calls: str | None = None  # the fused / called computation
    op_name: str = ""
    source_location: str = ""  # "file:line (function)"
    line: int = 0
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    # its JSON object, already encoded by the worker process that made it: the rest of the report
    # is then left empty; never part of the document itself
    encoded: EncodedElsewhere | None = field(default=None, repr=False, compare=False)

    def to_json(self, operands: bool = True) -> dict:
        """The target's JSON object (``operands=False``: both operand lists left empty)."""
        out = {
            "kind": self.kind,
            "name": self.name,
            "opcode": self.opcode,
            "computation": self.computation,
            "fusion_kind": self.fusion_kind,
            "outputs": [{"index": i, "shape": s} for i, s in self.outputs],
            "output_to_input": [o.to_json() for o in self.output_to_input] if operands else [],
            "input_to_output": [o.to_json() for o in self.input_to_output] if operands else [],
        }
        out.update(self.extra)
        return out


@dataclass(slots=True)
class DiagnosticReport:
    """A diagnostic of reading the module, as reported."""

    severity: str
    message: str
    line: int = 0
    column: int = 0
    path: str = ""
    source_line: str = ""

    def to_json(self) -> dict:
        return {"severity": self.severity, "message": self.message, "line": self.line, "column": self.column}


@dataclass(slots=True)
class ModuleReport:
    """What is reported of one module: its targets and diagnostics."""

    name: str
    source: str
    targets: list[TargetReport] = field(default_factory=list)
    diagnostics: list[DiagnosticReport] = field(default_factory=list)
    unreadable: bool = False
    missing_target: bool = False  # a --fusion / --computation / --instruction filter matched nothing here
    # ``to_json()`` already encoded, by the worker process that made the report (``--jobs``), so the
    # parent only copies text out; never part of the document itself
    json_text: str | None = field(default=None, repr=False, compare=False)
    # where that worker wrote the text instead (``--jobs``), and that file, opened (binary) and
    # unnamed by the parent, for the writer to copy out (``render.json_out.write_json``)
    json_path: str | None = field(default=None, repr=False, compare=False)
    json_file: Any = field(default=None, repr=False, compare=False)
    # module figures (``build.MODULE_FIGURES``), after ``diagnostics`` in the JSON object
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cost_error(self) -> bool:
        """A cost option did not apply to the input (an unknown what-if producer or consumer)."""
        return any(d.severity == "error" and d.message.startswith("cost: ") for d in self.diagnostics)

    @property
    def invalid_input(self) -> bool:
        """An analysis failed on an instruction XLA's verifier rejects: the commands exit 2, as for
        unreadable input."""
        return any(d.severity == "error" and d.message.startswith("invalid: ") for d in self.diagnostics)

    @property
    def internal_failure(self) -> bool:
        """An analysis raised (a bug): the commands exit 2, as for unreadable input."""
        return any(d.severity == "error" and d.message.startswith("internal: ") for d in self.diagnostics)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "source": self.source,
            "targets": [t.to_json() for t in self.targets],
            "diagnostics": [d.to_json() for d in self.diagnostics],
            **self.extra,
        }


def document(modules: list[ModuleReport]) -> dict:
    """The whole ``analyze --format json`` document."""
    return {"schema": SCHEMA, "modules": [m.to_json() for m in modules]}
