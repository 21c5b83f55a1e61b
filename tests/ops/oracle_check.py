"""Check an op's indexing rules against the independent numpy reference, element by element.

    check_out2in(instr, output_index=0, runtime=None, sample=2000, seed=0) -> int
        For every element y of output ``output_index`` (or a seeded sample of ``sample`` of them,
        always including the first and last), and every operand i: the union of
        ``m.read_set(y)`` over ``output_to_input(instr, output_index)[i].maps`` must equal
        ``hlo_index.reference.read_set(instr, output_index, y, i)``.
    check_in2out(instr, operand_index, runtime=None, sample=2000, seed=0, max_outputs=50_000) -> int
        The reference relation inverted (every output element is scanned, so at most
        ``max_outputs`` of them): for every element x of the operand (sampled likewise) and every
        output j, the union over ``input_to_output(instr, operand_index)[j]`` of ``m.read_set(x)``
        must equal {y : x in reference read_set(y)}.
    Runtime(map_values=(...), reference_values={...}) fixes the runtime variables: the maps'
        ``rt0, rt1, ...`` values and the reference's ``runtime_values`` for the same situation.

Both return the number of (element, operand-or-output) pairs compared and raise AssertionError
naming the first mismatching element. Maps must have the documented domains (output dims with
bounds [0, n-1] out to in; operand dims in to out); an UNDEFINED map fails the check.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hlo_index.hlo.model import Instruction
from hlo_index.ops import input_to_output, output_to_input
from hlo_index.reference import read_set as reference_read_set


@dataclass(frozen=True)
class Runtime:
    map_values: tuple[int, ...] = ()
    reference_values: dict | None = field(default=None)


def points(dims: Sequence[int], sample: int, seed: int) -> list[tuple[int, ...]]:
    """Every index of ``dims``, or a seeded sample (about ``sample``) that keeps the first and last."""
    dims = tuple(dims)
    total = int(np.prod(dims, dtype=np.int64))
    if total == 0:
        return []
    if total <= sample:
        return list(itertools.product(*(range(d) for d in dims)))
    rng = np.random.default_rng(seed)
    linear = set(rng.integers(0, total, size=sample - 2).tolist()) | {0, total - 1}
    return [tuple(int(i) for i in np.unravel_index(k, dims)) for k in sorted(linear)]


def _rule_reads(maps, point, runtime: Runtime) -> set[tuple[int, ...]]:
    found: set[tuple[int, ...]] = set()
    for m in maps:
        assert not m.is_undefined, f"UNDEFINED map: {m.undefined_reason}"
        found |= {tuple(int(v) for v in r) for r in m.read_set(point, runtime.map_values or None)}
    return found


def _check_domain(maps, dims: Sequence[int], what: str) -> None:
    for m in maps:
        if m.is_undefined or m.is_known_empty:
            continue
        got = tuple((iv.lo, iv.hi) for iv in m.dims)
        want = tuple((0, d - 1) for d in dims)
        assert m.num_dims == len(dims), f"{what}: map has {m.num_dims} dims, expected {len(dims)}: {m}"
        # The engine may tighten a bound from a constraint; it must stay inside the shape.
        for (lo, hi), (wlo, whi) in zip(got, want):
            assert wlo <= lo and hi <= whi, f"{what}: dim bounds {got} outside {want}: {m}"


def check_out2in(
    instr: Instruction, output_index: int = 0, runtime: Runtime | None = None, sample: int = 2000, seed: int = 0
) -> int:
    runtime = runtime or Runtime()
    out_dims = instr.shape.leaf(output_index).dims
    per_operand = output_to_input(instr, output_index)
    assert len(per_operand) == len(instr.operands), f"{len(per_operand)} OperandMaps for {len(instr.operands)} operands"
    compared = 0
    for i, om in enumerate(per_operand):
        assert om.operand == i, f"OperandMaps #{i} names operand {om.operand}"
        _check_domain(om.maps, out_dims, f"{instr.opcode} out{output_index}->operand {i}")
        for y in points(out_dims, sample, seed):
            got = _rule_reads(om.maps, y, runtime)
            want = reference_read_set(instr, output_index, y, i, runtime.reference_values)
            assert got == want, (
                f"{instr.opcode} output {output_index} element {y} -> operand {i}: "
                f"rule reads {sorted(got)[:8]}, reference {sorted(want)[:8]}; "
                f"maps: {[str(m) for m in om.maps]}"
            )
            compared += 1
    return compared


def _operand_dims(instr: Instruction, operand_index: int, output_index: int) -> tuple[int, ...]:
    shape = instr.operands[operand_index].shape
    if not shape.is_tuple:
        return shape.dims
    element = output_to_input(instr, output_index)[operand_index].operand_output
    return shape.leaf(element).dims


def check_in2out(
    instr: Instruction,
    operand_index: int,
    runtime: Runtime | None = None,
    sample: int = 2000,
    seed: int = 0,
    max_outputs: int = 50_000,
) -> int:
    runtime = runtime or Runtime()
    per_output = input_to_output(instr, operand_index)
    assert len(per_output) == instr.shape.num_outputs, (
        f"{len(per_output)} map tuples for {instr.shape.num_outputs} outputs"
    )
    compared = 0
    for j, maps in enumerate(per_output):
        out_dims = instr.shape.leaf(j).dims
        assert int(np.prod(out_dims, dtype=np.int64)) <= max_outputs, f"output {j} too large to invert"
        readers: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
        for y in itertools.product(*(range(d) for d in out_dims)):
            for x in reference_read_set(instr, j, y, operand_index, runtime.reference_values):
                readers.setdefault(x, set()).add(y)
        operand_dims = _operand_dims(instr, operand_index, j)
        _check_domain(maps, operand_dims, f"{instr.opcode} operand {operand_index}->out{j}")
        for x in points(operand_dims, sample, seed):
            got = _rule_reads(maps, x, runtime)
            want = readers.get(x, set())
            assert got == want, (
                f"{instr.opcode} operand {operand_index} element {x} -> output {j}: "
                f"rule gives {sorted(got)[:8]}, reference {sorted(want)[:8]}; "
                f"maps: {[str(m) for m in maps]}"
            )
            compared += 1
    return compared
