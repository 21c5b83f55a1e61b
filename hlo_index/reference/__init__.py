"""Independent numpy oracle: the exact operand elements one output element of an op reads.

Written from each op's semantics, never from the indexing rules or the map engine (an oracle
that shares code with what it checks proves nothing). One module per op family, ``ref_*.py``,
registering with ``@reads("opcode", ...)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from ..context import current
from ..hlo.model import Instruction

ReadSetFn = Callable[[Instruction, int, tuple, int, dict | None], set]
"""(instr, output_index, out_point, operand_index, runtime_values) -> set of operand index tuples."""

READ_SETS: dict[str, ReadSetFn] = {}
# Ops that may read several elements of a tuple-shaped operand (conditional branches, while):
# (instr, output_index, out_point, operand_index) -> {tuple element: set of its elements}.
ELEMENT_READ_SETS: dict[str, Callable] = {}
# Ops whose read set of a whole set of output elements is cheaper to say at once than per element
# (elementwise: the same elements): (instr, output_index, out_linear, operand_index) -> operand linear.
# Element sets here are 1-D int64 arrays of row-major linear indices (``linear_of``): a set of
# 10^6 elements stays one array instead of 10^6 tuples. ``out_linear`` holds distinct indices
# over output ``output_index``'s dims; the answer indexes the operand (its tuple element
# ``operand_element_read``), in any order, repeats allowed; it is ``out_linear`` itself exactly
# when each element reads itself alone, whatever the elements (a walk then skips the call).
# Each is written beside its per-element function and must equal the union of its answers.
SET_READ_SETS: dict[str, Callable] = {}


class NoReference(LookupError):
    """The op has no reference semantics here (opaque op)."""


def _registrar(table: dict) -> Callable:
    """A decorator factory: ``@it("op", ...)`` files the function under each opcode in ``table``."""

    def by_opcodes(*opcodes: str):
        def register(fn):
            for op in opcodes:
                table[op] = fn
            return fn

        return register

    return by_opcodes


reads = _registrar(READ_SETS)  # one output element's read set
reads_elements = _registrar(ELEMENT_READ_SETS)  # per tuple element of the operand
reads_sets = _registrar(SET_READ_SETS)  # the read set of a whole set of output elements


SCALAR_ELEMENT = np.zeros(1, dtype=np.int64)  # the one element of a rank-0 value, as a linear set
SCALAR_ELEMENT.setflags(write=False)
NO_ELEMENTS = SCALAR_ELEMENT[:0]


def within_reference_budget(elements: int, what: str) -> None:
    """Raise ``NoReference`` where a reference would materialise more than the budget
    ``verify_reference_elements`` allows (``what``: of what, for the message)."""
    limit = current().budgets.verify_reference_elements
    if elements > limit:
        raise NoReference(f"budget verify_reference_elements={limit}: {what} are too many to materialise")


def linear_of(points, dims) -> np.ndarray:
    """The row-major linear indices over ``dims`` of ``points`` (tuples), in their order."""
    count = len(points)
    if not dims:
        return np.zeros(count, dtype=np.int64)
    if count == 1:  # one element (most walks): plain integers, without numpy's cost per call
        [point] = points
        if len(point) != len(dims) or not all(0 <= i < n for i, n in zip(point, dims)):
            raise ValueError(f"element {tuple(point)} is outside dims {tuple(dims)}")
        at = 0
        for i, n in zip(point, dims):
            at = at * n + int(i)
        return np.array([at], dtype=np.int64)
    dims = tuple(dims)
    flat = np.fromiter(itertools.chain.from_iterable(points), dtype=np.int64, count=count * len(dims))
    return np.ravel_multi_index(tuple(flat.reshape(count, len(dims)).T), dims)


def distinct(linear: np.ndarray) -> np.ndarray:
    """``linear`` sorted, each index once (``np.unique``'s answer: numpy 2's hashing
    ``np.unique`` is many times slower than one sort on large integer arrays). Often it is
    already (a reduction's row, a broadcast's elements): one comparison pass instead of a sort;
    a dense one is marked in a mask over its span instead of sorted."""
    if len(linear) < 2:
        return linear
    if (linear[1:] > linear[:-1]).all():
        return linear
    low, high = int(linear.min()), int(linear.max())
    if high - low < 8 * len(linear):  # dense (a row read through a broadcast): marks, no sort
        marks = np.zeros(high - low + 1, dtype=bool)
        marks[linear - low if low else linear] = True
        found = np.flatnonzero(marks)
        return found + low if low else found
    ordered = np.sort(linear)
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def point_of(at: int, dims) -> tuple[int, ...]:
    """The element at row-major linear index ``at`` over ``dims``."""
    rest, point = at, []
    for n in reversed(dims):
        rest, i = divmod(rest, n)
        point.append(i)
    if rest or at < 0:
        raise ValueError(f"index {at} is out of bounds for dims {tuple(dims)}")
    return tuple(point[::-1])


def points_of(linear: np.ndarray, dims) -> list[tuple[int, ...]]:
    """The elements (tuples) at row-major linear indices ``linear`` over ``dims``, in their order."""
    if not dims:
        return [()] * len(linear)
    if len(linear) == 1:  # one element (most walks): plain integers, without numpy's cost per call
        return [point_of(int(linear[0]), dims)]
    return list(zip(*(c.tolist() for c in np.unravel_index(linear, tuple(dims)))))


def element_read_sets(
    instr: Instruction,
    output_index: int,
    out_point: tuple,
    operand_index: int,
    runtime_values: dict[int, np.ndarray] | None = None,
) -> dict[int, set]:
    """Per tuple element of operand ``operand_index`` (0 for an array), the elements read."""
    fn = ELEMENT_READ_SETS.get(instr.opcode)
    if fn is not None:
        return fn(instr, output_index, tuple(out_point), operand_index)
    return {
        operand_element_read(instr, output_index): read_set(
            instr, output_index, out_point, operand_index, runtime_values
        )
    }


def read_set(
    instr: Instruction,
    output_index: int,
    out_point: tuple,
    operand_index: int,
    runtime_values: dict[int, np.ndarray] | None = None,
) -> set[tuple[int, ...]]:
    """Exact set of elements of operand ``operand_index`` read by ``out_point`` of output ``output_index``.

    ``runtime_values`` maps operand numbers (offsets, indices) to concrete numpy arrays.
    """
    fn = READ_SETS.get(instr.opcode)
    if fn is None:
        raise NoReference(f"no reference semantics for opcode '{instr.opcode}'")
    return fn(instr, output_index, tuple(out_point), operand_index, runtime_values)


def operand_element_read(instr: Instruction, output_index: int) -> int:
    """Which element of a tuple-shaped operand output ``output_index`` reads (0 for arrays).

    Semantics, not maps: get-tuple-element reads element ``index``; opt-barrier, async-update
    and the done of an all-reduce of several operands (whose start is the tuple of their sums)
    pass element ``output_index`` through; copy-done returns the copy-start tuple's destination
    (element 0) and async-done the async tuple's result (element 1).
    """
    op = instr.opcode
    if op == "get-tuple-element":
        return int(instr.attr("index", 0))
    if op in ("opt-barrier", "async-update", "all-reduce-done") and instr.operands and instr.operands[0].shape.is_tuple:
        return output_index
    if op == "async-done":
        return 1
    return 0


def _register_reference_modules() -> None:
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("ref_"):
            importlib.import_module(f"{__name__}.{info.name}")


_register_reference_modules()
