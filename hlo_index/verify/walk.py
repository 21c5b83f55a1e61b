"""Backward reference walks: the exact parameter elements an output element reads, op by op."""

from __future__ import annotations

import hashlib

import numpy as np

from ..context import current
from ..fusion import callee_of
from ..fusion.traverse import post_order
from ..hlo.model import Computation, Instruction
from ..hlo.opcodes import ELEMENTWISE_OPCODES
from ..reference import SET_READ_SETS, distinct, linear_of, operand_element_read, point_of, points_of
from .outcome import Skip
from .references import (
    STRUCTURE_IDS,
    reference_element_read_sets,
    reference_read_set,
    reference_set_read,
    shape_only_structure,
)

# Moving ops (transpose, broadcast, pad...) read a set of elements in one numpy pass, but their
# per-element reads are memoised between the targets of a module, and a hit costs nothing: a walk
# takes the set path from this many elements of one value. Elementwise ops always take it (it is
# free), and so do ops whose per-element reads cost far more than a set read of a few elements:
# a concatenation's reference builds the slab of every operand per element and operand (a
# 160-operand concatenation: 160^2 slabs per element), a reduction's, dot's or convolution's read
# set is a row (every input feature and tap) of Python tuples.
SET_READS_FROM = 32
_SET_READS_ALWAYS = frozenset(ELEMENTWISE_OPCODES) | {"concatenate", "reduce", "dot", "convolution"}


class Walker:
    """Backward reference walks over one computation, for the length of one target's check.

    The post-order, and for each set of wanted parameters the instructions that can reach one of
    them, are found once; reference read sets are memoised by (instruction, output, point,
    operand). Keys hold the instruction objects themselves, alive as long as this walker."""

    def __init__(
        self, comp: Computation, walkers: dict, reads: dict, shared_reads: dict | None = None, tally: list | None = None
    ) -> None:
        self.comp = comp
        self.order = post_order(comp)
        self.walkers = walkers  # Computation -> Walker, shared by the callees' walkers
        self.reads = reads  # (instr, out, point, operand) -> read set
        self.shared_reads = {} if shared_reads is None else shared_reads  # (structure, ...) -> set
        self.structure_ids = self.shared_reads.setdefault(STRUCTURE_IDS, {})
        self._readers: dict[Instruction, tuple] = {}
        self._visits: dict[tuple, tuple] = {}
        self._params: dict[Instruction, frozenset] | None = None
        self._orders: dict[frozenset | None, list[Instruction]] = {None: self.order[::-1]}
        self._plans: dict[frozenset | None, list[tuple]] = {}
        self._steps: dict[tuple[frozenset | None, int], list[tuple]] = {}
        self._hands_on: dict[tuple, bool] = {}  # (instr, operand positions) -> ``_hands_on``
        # elements the walks pulled back through the instructions, in all, callees' included (one
        # count shared with the callees' walkers), and the points the target's maps enumerate (it
        # adds them): what the target's budget counts
        self.tally = [0] if tally is None else tally

    @property
    def walked(self) -> int:
        return self.tally[0]

    def _reverse_order(self, wanted: frozenset | None) -> list[Instruction]:
        """Instructions (users first) that can reach a parameter in ``wanted`` (None: all)."""
        found = self._orders.get(wanted)
        if found is None:
            params = self._parameters()
            found = [i for i in reversed(self.order) if wanted is None or not params[i].isdisjoint(wanted)]
            self._orders[wanted] = found
        return found

    def _parameters(self) -> dict[Instruction, frozenset]:
        """Instruction -> the parameter numbers it can reach, found once."""
        if self._params is None:
            params: dict[Instruction, frozenset] = {}
            for instr in self.order:
                if instr.opcode == "parameter":
                    params[instr] = frozenset((instr.parameter_number,))
                else:
                    params[instr] = frozenset().union(*(params.get(o, frozenset()) for o in instr.operands))
            self._params = params
        return self._params

    def _plan(self, wanted: frozenset | None) -> list[tuple]:
        """One step per instruction of ``_reverse_order(wanted)``, with what a walk asks of it
        found once: (instr, its outputs, parameter number or None, memo, owner, callee walker,
        visited operands, set read-set function or None, per output whether it is a tuple)."""
        plan = self._plans.get(wanted)
        if plan is None and wanted is not None:
            plan = self._plans[wanted] = self._plan_within(wanted)
        if plan is None:
            plan = []
            for instr in self._reverse_order(wanted):
                outputs = range(instr.shape.num_outputs)
                if instr.opcode == "parameter":
                    plan.append((instr, outputs, instr.parameter_number, None, None, None, (), None, (), 1))
                    continue
                memo, owner, callee_walker = self._reader(instr)
                set_reads = SET_READ_SETS.get(instr.opcode)
                operands = self._visited_operands(instr, wanted)
                whole = None  # with, per output, where each operand's answer goes, found once
                if set_reads is not None:
                    fewest = 1 if instr.opcode in _SET_READS_ALWAYS else SET_READS_FROM
                    # [operand position, need key, dims (None: passed through), reads itself]
                    targets = tuple(
                        [
                            [j, (operand, element), _array_dims(operand, element), False]
                            for j, operand in operands
                            for element in (operand_element_read(instr, out),)
                        ]
                        for out in outputs
                    )
                    whole = (set_reads, targets, fewest)
                nested = tuple(instr.shape.leaf(out).is_tuple for out in outputs)
                plan.append((instr, outputs, None, memo, owner, callee_walker, operands, whole, nested, 1))
            self._plans[wanted] = plan
        return plan

    def _plan_within(self, wanted: frozenset) -> list[tuple]:
        """``_plan(wanted)`` cut out of the whole plan: its steps for the instructions that reach
        a wanted parameter, each with the operands that do (their targets are the whole plan's:
        what is found of an operand's read sets holds for any walk)."""
        params = self._parameters()
        plan = []
        for step in self._plan(None):
            instr = step[0]
            if params[instr].isdisjoint(wanted):
                continue
            operands = step[6]
            kept = tuple((j, o) for j, o in operands if not params.get(o, frozenset()).isdisjoint(wanted))
            if len(kept) == len(operands):
                plan.append(step)
                continue
            whole = step[7]
            if whole is not None:
                positions = {j for j, _ in kept}
                reads, targets, fewest = whole
                whole = (reads, tuple([t for t in per_out if t[0] in positions] for per_out in targets), fewest)
            plan.append((*step[:6], kept, whole, *step[8:]))
        return plan

    def _steps_from(self, wanted: frozenset | None, output_index: int) -> list[tuple]:
        """The steps of ``_plan(wanted)`` a walk from output ``output_index`` can reach: a flat
        tuple root's output reads its own operand alone, so only that operand's instructions
        (a multi-output fusion of 60 independent chains walks one chain, not all 800 steps)."""
        key = (wanted, output_index)
        steps = self._steps.get(key)
        if steps is None:
            plan = self._plan(wanted)
            root = self.comp.root
            steps = plan
            if (
                root is not None
                and root.opcode == "tuple"
                and output_index < len(root.operands)
                and not any(o.shape.is_tuple for o in root.operands)
            ):
                reached = _reaching(root.operands[output_index])
                steps = [step for step in plan if step[0] in reached]
                for step in plan:  # and of the root's operands, that one alone
                    if step[0] is root:
                        own = tuple((j, operand) for j, operand in step[6] if j == output_index)
                        steps.insert(0, (*step[:6], own, *step[7:]))
                        break
            self._steps[key] = steps = _through_elementwise(steps, root, self._hands_on)
        return steps

    def walk(
        self,
        output_index: int,
        point: tuple | None,
        wanted: frozenset | None = None,
        dims: tuple | None = None,
        points: np.ndarray | None = None,
    ) -> dict[tuple[int, int], tuple]:
        """(parameter number, tuple element) -> (dims, linear): the exact set of its elements read
        by ``point`` of the output, as sorted distinct row-major linear indices over ``dims`` (the
        element's dims; see :func:`elements_as_points`); with ``wanted``, only for those
        parameters (the rest of the graph is not walked). ``dims``: the point's (default: the
        output's; a callee's caller passes a nested tuple's elements through). ``points``: a sorted
        distinct linear set of output elements walked at once instead of ``point`` (what they
        read together is the union of what each reads). Every set stays one numpy array from
        op to op: a reduction's row of 10^6 elements is not 10^6 tuples.
        (A heap of only the instructions reached was tried: most walks reach most of the order,
        and the heap cost more than the steps it skipped.)"""
        root = self.comp.root
        if root is None:
            return {}
        if dims is None:
            dims = root.shape.leaf(output_index).dims
        start = points if points is not None else linear_of((point,), dims)
        need: dict[tuple[Instruction | None, int], list] = {(root, output_index): [dims, start]}
        found: dict[tuple[int, int], tuple] = {}
        limit = current().budgets.verify_points_per_value
        for instr, outputs, parameter, memo, owner, callee_walker, operands, whole, nested, folded in self._steps_from(
            wanted, output_index
        ):
            if not need:  # every point reached the parameters: the rest of the order is not read
                break
            for out in outputs:
                pending = need.pop((instr, out), None)
                if pending is None:
                    continue
                dims = pending[0]
                points = pending[1] if len(pending) == 2 else _union(pending)
                if parameter is not None:
                    found[(parameter, out)] = (dims, points)
                    continue
                self.tally[0] += len(points) * folded
                if len(points) > limit:
                    raise Skip(
                        f"budget verify_points_per_value={limit}: more than {limit} elements of '{instr.name}' are read"
                    )
                if callee_walker is not None:
                    # all the points through the callee in one walk: a nested fusion read at
                    # thousands of points is not thousands of walks
                    for (param, element), (got_dims, got) in callee_walker.walk(out, None, None, dims, points).items():
                        _add(need, (instr.operands[param], element), got_dims, got)
                    continue
                if whole is not None and len(points) >= whole[2]:  # the read set of all the points at once
                    reads, targets, _ = whole
                    for target in targets[out]:
                        j, key, element_dims, itself = target
                        if itself:
                            got = points
                        else:
                            # walks for different wanted parameters bring the same points again
                            set_key = (owner, out, j, _set_key(points))
                            got = memo.get(set_key)
                            if got is None:
                                got = reference_set_read(reads, instr, out, points, j)
                                if got is points:  # each element reads itself: so it will for any points
                                    target[3] = True
                                else:
                                    got = distinct(got) if len(got) else got
                                memo[set_key] = got
                            if not len(got):
                                continue
                        if element_dims is None:
                            element_dims = dims
                        _add(need, key, element_dims, got)
                    continue
                # memoised by linear index, the element made only on a miss (a nested tuple's
                # elements are those passed through it: their dims are part of the key)
                passed_through = nested[out]
                for at in points.tolist():
                    for j, operand in operands:
                        memo_key = (owner, out, (dims, at) if passed_through else at, j)
                        per_element = memo.get(memo_key)
                        if per_element is None:
                            p = point_of(at, dims)
                            per_element = memo[memo_key] = {
                                element: (element_dims, _linear(instr, j, got, element_dims))
                                for element, got in reference_element_read_sets(instr, out, p, j).items()
                                if got
                                for element_dims in (_element_dims(operand, element, dims),)
                            }
                        for element, (element_dims, got) in per_element.items():
                            _add(need, (operand, element), element_dims, got)
        return found

    def _reader(self, instr: Instruction) -> tuple:
        """(memo of read sets, its key's owner, the callee's walker or None) of ``instr``, found
        once per walker: the owner is the instruction, or a small int per distinct structure
        for shape-only ops (their read sets are shared between targets)."""
        reader = self._readers.get(instr)
        if reader is None:
            structure = shape_only_structure(instr)
            if structure is not None:
                ids = self.structure_ids
                structure = ids.setdefault(structure, len(ids))
            memo, owner = (self.reads, instr) if structure is None else (self.shared_reads, structure)
            callee = callee_of(instr)
            callee_walker = None
            if callee is not None:
                callee_walker = self.walkers.get(callee)
                if callee_walker is None:
                    callee_walker = Walker(callee, self.walkers, self.reads, self.shared_reads, self.tally)
                    self.walkers[callee] = callee_walker
            reader = self._readers[instr] = (memo, owner, callee_walker)
        return reader

    def _visited_operands(self, instr: Instruction, wanted: frozenset | None) -> tuple:
        """``(position, operand)`` of the operands a walk for ``wanted`` goes through."""
        key = (instr, wanted)
        found = self._visits.get(key)
        if found is None:
            params = self._parameters() if wanted is not None else {}
            found = self._visits[key] = tuple(
                (j, operand)
                for j, operand in enumerate(instr.operands)
                if wanted is None or not params.get(operand, frozenset()).isdisjoint(wanted)
            )
        return found


_PROBE = np.zeros(1, dtype=np.int64)
_ONE_OUTPUT = range(1)


def _through_elementwise(steps: list[tuple], root: Instruction | None, known: dict[tuple, bool]) -> list[tuple]:
    """``steps`` with every elementwise step that only one other elementwise step reads folded
    into that reader: an elementwise op hands its points on unchanged (the reference says so,
    asked once with a probe), so a chain of them (most of a fused computation's steps) is one
    step whose points go straight to the chain's operands. A folded step's points are its
    reader's, so the walk counts them as the reader's times the steps it stands for (the
    ``folded`` field): the tally, the budget and what is reached are the unfolded walk's."""
    feeds: dict[Instruction, int] = {}  # instruction -> how many step outputs hand it points
    for step in steps:
        for _ in step[1]:
            for _, operand in step[6]:
                feeds[operand] = feeds.get(operand, 0) + 1
    passing = {}
    for step in steps:
        if step[1] == _ONE_OUTPUT and step[7] is not None:
            key = (step[0], tuple(target[0] for target in step[7][1][0]))
            hands_on = known.get(key)
            if hands_on is None:
                hands_on = known[key] = _hands_on(step)
            if hands_on:
                passing[step[0]] = step
    folded_into: dict[Instruction, Instruction] = {}
    for instr, step in passing.items():
        for _, operand in step[6]:
            # the walk starts at the root: it is never folded into another step
            if operand in passing and operand is not root and feeds.get(operand) == 1:
                folded_into[operand] = instr
    if not folded_into:
        return steps

    out = []
    for step in steps:
        instr = step[0]
        if instr in folded_into:
            continue
        if instr in passing and any(folded_into.get(o) is instr for _, o in step[6]):
            into: list = []
            folded = _destinations(instr, passing, folded_into, into)
            reads, _, fewest = step[7]
            step = (*step[:7], (reads, (into,), fewest), step[8], folded)
        out.append(step)
    return out


def _destinations(instr: Instruction, passing: dict, folded_into: dict, into: list) -> int:
    """Into ``into``, the targets of a passing step's points: its operands', through the steps
    folded into it; the steps it stands for, itself included."""
    steps = 1
    for target in passing[instr][7][1][0]:
        operand = target[1][0]
        if folded_into.get(operand) is instr:
            steps += _destinations(operand, passing, folded_into, into)
        else:
            into.append([target[0], target[1], target[2], True])
    return steps


def _hands_on(step: tuple) -> bool:
    """Whether a step hands its points to every operand it visits unchanged: an elementwise op
    of one output whose operands have its dims (not a scalar beside them), as its reference
    answers for a probe point."""
    instr, outputs, parameter, _, _, callee_walker, operands, whole, nested, _ = step
    if (
        parameter is not None
        or callee_walker is not None
        or whole is None
        or len(outputs) != 1
        or nested[0]
        or instr.opcode not in ELEMENTWISE_OPCODES
        or not operands
    ):
        return False
    reads, targets, _ = whole
    for j, _, element_dims, _ in targets[0]:
        if element_dims is None or element_dims != instr.shape.dims:
            return False
        try:
            if reference_set_read(reads, instr, 0, _PROBE, j) is not _PROBE:
                return False
        except Skip:  # said, if the walk reaches it, by the step itself
            return False
    return True


def _reaching(instr: Instruction) -> set[Instruction]:
    """``instr`` and every instruction it reads, directly or not."""
    reached = {instr}
    stack = [instr]
    while stack:
        for operand in stack.pop().operands:
            if operand not in reached:
                reached.add(operand)
                stack.append(operand)
    return reached


def _element_dims(operand: Instruction, element: int, dims: tuple) -> tuple:
    """The dims of tuple element ``element`` of ``operand``; ``dims`` (those of the elements
    passed through) where it is itself a tuple (a get-tuple-element of a nested tuple)."""
    leaf = operand.shape.leaf(element)
    return dims if leaf.is_tuple else leaf.dims


def _array_dims(operand: Instruction, element: int) -> tuple | None:
    """The dims of tuple element ``element`` of ``operand``; None where it is itself a tuple."""
    leaf = operand.shape.leaf(element)
    return None if leaf.is_tuple else leaf.dims


def _linear(instr: Instruction, operand: int, got: set, dims: tuple) -> np.ndarray:
    """A reference read set (tuples) as a sorted linear set over ``dims``."""
    try:
        return np.sort(linear_of(got, dims))
    except ValueError:
        raise Skip(f"reference for {instr.opcode} '{instr.name}' reads outside operand {operand}") from None


def _add(need: dict, key: tuple, dims: tuple, linear: np.ndarray) -> None:
    """Add a sorted distinct linear set over ``dims`` to what the walk needs of ``key``."""
    if not len(linear):
        return
    pending = need.get(key)
    if pending is None:
        need[key] = [dims, linear]
    elif pending[0] is not dims and pending[0] != dims:
        raise Skip(f"elements of two different arrays are read through one value of '{key[0].name}'")
    else:
        pending.append(linear)


def _union(pending: list) -> np.ndarray:
    """The union of the sets of a ``need`` entry ``[dims, set, set...]``, sorted and distinct (an
    elementwise chain hands the very same array on: one set however many paths bring it)."""
    first = pending[1]
    if all(piece is first for piece in pending[2:]):
        return first
    # most often the paths bring equal sets (a reduction's row through two broadcasts of it):
    # one comparison pass each instead of a sort of them all
    n = len(first)
    if all(piece is first or (len(piece) == n and (piece == first).all()) for piece in pending[2:]):
        return first
    return distinct(np.concatenate(pending[1:]))


def elements_as_points(dims: tuple, linear: np.ndarray) -> set[tuple[int, ...]]:
    """A walk's element set as a set of index tuples."""
    return set(points_of(linear, dims))


def backward_read_sets(comp: Computation, output_index: int, point: tuple) -> dict[tuple[int, int], set]:
    """(parameter number, tuple element) -> exact set of its elements read by ``point`` of the output."""
    found = Walker(comp, {}, {}).walk(output_index, point)
    return {key: elements_as_points(*value) for key, value in found.items()}


def single_op_read_sets(instr: Instruction, output_index: int, point: tuple) -> dict[tuple[int, int], tuple]:
    """(operand, tuple element) -> (dims, linear) of one instruction: a walk's answer shape."""
    dims = instr.shape.leaf(output_index).dims
    out = {}
    for j in range(len(instr.operands)):
        got = reference_read_set(instr, output_index, point, j)
        if got:
            element = operand_element_read(instr, output_index)
            element_dims = _element_dims(instr.operands[j], element, dims)
            out[(j, element)] = (element_dims, _linear(instr, j, got, element_dims))
    return out


def _set_key(points: np.ndarray) -> bytes:
    """A memo key for a set of linear indices: its bytes, or for a large set their digest (a
    reduction's row of 10^7 elements would otherwise be kept twice, once as its key)."""
    data = points.tobytes()
    return (
        data if len(data) <= 4096 else hashlib.blake2b(data, digest_size=32).digest() + len(data).to_bytes(8, "little")
    )
