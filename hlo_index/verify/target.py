"""One target's verification: its output-to-input maps against the reference walk, identical
targets of a module verified once."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..api import SelectedTarget
from ..context import current
from ..fusion import callee_of, output_to_input
from ..fusion.fingerprint import computation_fingerprint
from ..hlo.model import Computation, Instruction, Module
from ..reference import NO_ELEMENTS
from .memos import linear_read_sets_memo, read_sets_memo, shared_memo
from .outcome import Skip, VerifyOutcome, point_text
from .pairs import array_operand_dims, verify_input_to_output
from .points import checkable_maps, combinations
from .references import SHARED_READS_LIMIT
from .sampling import sampled_elements
from .walk import Walker, elements_as_points, single_op_read_sets


def _identity(selected: SelectedTarget):
    """A key equal for targets that are the same computation up to names (None: no dedup)."""
    target = selected.target
    comp = target if isinstance(target, Computation) else callee_of(target)
    if comp is None:
        return None
    return (selected.kind, computation_fingerprint(comp))


def verify_target(
    selected: SelectedTarget,
    module: Module | None = None,
    samples: int = 8,
    seed: int | None = None,
    input_to_output_too: bool = True,
    verified: dict | None = None,
) -> VerifyOutcome:
    """Compare the target's output-to-input (and input-to-output) maps with the reference walk on
    sampled elements (see the module docstring for the sampling).

    ``seed``: the base of every sampling seed (None: 0). ``verified``: a dict kept for one module;
    a target identical to one already verified there (same structure, seed and sample count)
    takes its clean outcome: the same maps checked at the same elements give the same answer."""
    if seed is None:
        seed = 0
    key = None
    if verified is not None:
        identity = _identity(selected)
        if identity is not None:
            key = (identity, samples, seed, input_to_output_too)
            done = verified.get(key)
            if done is not None:
                return replace(done, errors=[], notes=[])
    shared: dict | None = None
    if verified is not None:
        shared = verified.setdefault(_SHARED_READS, {})
        if len(shared) > SHARED_READS_LIMIT:
            shared.clear()
    outcome = _verify_target(selected, samples, seed, input_to_output_too, shared)
    if verified is not None and key is not None and not outcome.errors and not outcome.notes:
        verified[key] = outcome  # only clean outcomes: errors and notes name instructions
    return outcome


def _holds_no_array(shape) -> bool:
    """Whether ``shape`` is a tuple with no array inside, at any depth (``()``, ``((), ())``)."""
    return shape.is_tuple and all(_holds_no_array(s) for s in shape.tuple_shapes)


def _equal(a, b) -> bool:
    """Whether two linear sets are equal (one element, the most common: without numpy's calls)."""
    if len(a) != len(b):
        return False
    return int(a[0]) == int(b[0]) if len(a) == 1 else bool((a == b).all())  # equal lengths: no array_equal checks


_SHARED_READS = "reference read sets of shape-only ops"  # a key of ``verified`` (a str: no clash)


def _verify_target(
    selected: SelectedTarget, samples: int, seed: int, input_to_output_too: bool, shared_reads: dict | None = None
) -> VerifyOutcome:
    outcome = VerifyOutcome()
    target = selected.target
    comp = target if isinstance(target, Computation) else callee_of(target)
    rows = output_to_input(target)
    walker: Walker | None = None
    single_op: Instruction | None = None
    if comp is not None:
        if comp.root is None:  # no output to sample
            return outcome
        walker = Walker(comp, {}, {}, shared_reads)
        shape = comp.root.shape
    elif isinstance(target, Instruction):
        single_op = target
        shape = target.shape
    truth_cache: dict = {}

    def exact(out: int, point: tuple, operands: frozenset | None = None) -> dict:
        """Exact read sets of ``point``; with ``operands``, those of these operands at least
        (the walk goes through only the instructions that reach one of them)."""
        hit = truth_cache.get((out, point))
        if hit is None and operands is not None:
            hit = truth_cache.get((out, point, operands))
        if hit is None:
            if single_op is not None:
                hit = single_op_read_sets(single_op, out, point)
            elif walker is None:
                hit = {}
            else:
                hit = walker.walk(out, point, operands)
            truth_cache[(out, point) if operands is None else (out, point, operands)] = hit
        return hit

    sampled: list[tuple[int, tuple]] = []
    read_set_of = read_sets_memo(shared_reads)
    linear_read_set_of = linear_read_sets_memo(shared_reads)
    operand_dims = dict(array_operand_dims(target))
    elements_of = shared_memo(shared_reads, "sampled elements", sampled_elements)
    budget = current().budgets.verify_points_per_target
    try:
        # the range-variable points each row's maps enumerate at a point, counted against the
        # target's budget with the walks' elements; a map too large to enumerate skips the target
        # before any walk
        enumerated: dict[int, int] = {}
        if any(shape.leaf(out).num_elements for out in range(shape.num_outputs)):
            for row in rows:
                enumerated[id(row)] = sum(combinations(m) for m in checkable_maps(row.maps))
        # per output, its rows with what each asks of a point found once: (row, operand key, and
        # whether the maps have runtime variables: they give the union over every offset, more is allowed)
        rows_of: dict[int, list] = {}
        for row in rows:
            runtime = any(m.runtime_vars for m in row.maps)
            rows_of.setdefault(row.output, []).append((row, (row.operand, row.operand_element), runtime))
        for out in range(shape.num_outputs):
            leaf = shape.leaf(out)
            if _holds_no_array(leaf):
                continue  # an empty tuple (a call that returns ()) has no element to sample
            dims = leaf.dims
            for point in elements_of(seed, dims, samples):
                outcome.sampled_points += 1
                if walker is not None and walker.walked >= budget and outcome.checked_points:
                    continue  # the walks so far spent the target's budget: the rest are counted, not walked
                truth_all = exact(out, point)
                sampled.append((out, point))
                outcome.checked_points += 1
                for row, key, runtime in rows_of.get(out, ()):
                    if walker is not None:
                        walker.tally[0] += enumerated.get(id(row), 0)
                    truth_dims, truth = truth_all.get(key, (operand_dims.get(key), NO_ELEMENTS))
                    given = None if truth_dims is None else linear_read_set_of(row.maps, point, truth_dims)
                    if given is not None and (
                        np.isin(truth, given, assume_unique=True).all() if runtime else _equal(truth, given)
                    ):
                        continue
                    # a mismatch (or elements outside the operand): said on sets of index tuples
                    truth_set = set() if truth_dims is None else elements_as_points(truth_dims, truth)
                    given_set = read_set_of(row.maps, point)
                    missing = truth_set - given_set
                    if missing:
                        outcome.errors.append(
                            f"{selected.kind} '{target.name}': output {out} element {point_text(point)} reads "
                            f"operand {row.operand} element {point_text(min(missing))}, which no map gives"
                            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                        )
                    extra = () if runtime else given_set - truth_set
                    if extra:
                        outcome.errors.append(
                            f"{selected.kind} '{target.name}': the maps say output {out} element {point_text(point)} "
                            f"reads operand {row.operand} element {point_text(min(extra))}, which it does not"
                            + (f" (and {len(extra) - 1} more)" if len(extra) > 1 else "")
                        )
    except Skip as exc:
        outcome.notes.append(f"verification skipped: {exc}")
        return outcome
    if input_to_output_too:
        try:
            spent = (lambda: walker.walked >= budget) if walker is not None else (lambda: False)
            verify_input_to_output(selected, exact, sampled, samples, seed, outcome, shared_reads, spent)
        except Skip as exc:
            outcome.notes.append(f"input-to-output verification skipped: {exc}")
    return outcome
