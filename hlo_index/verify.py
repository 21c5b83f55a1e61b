"""``--verify``: check a target's printed maps against the numpy reference, element by element.

For seeded sample elements of every output, the exact set of parameter elements read is computed
by walking the computation backward with each op's reference read-set function
(``hlo_index.reference``, which shares no code with the maps). The maps must give a superset, and
the same set unless the maps carry runtime variables (then they give the union over every feasible
offset, and the reference's read set for one choice of offsets must be inside it).

Input-to-output maps are checked from both sides on samples: every (operand element, output
element) pair the reference walk finds for a sampled output element must be given by the
operand's input-to-output maps, and every output element those maps give for a sampled operand
element (a few of them) must read that operand element according to the reference walk.

Sampling (``samples`` = 8 by default), deterministic: each choice is seeded from what it is about
(an output's or operand's dimensions, the image being sampled; never names, never time), so a run
repeats exactly, and equal questions get equal answers across the targets of a module: walks and
reference read sets are then shared instead of repeated.
* per output: ``samples`` elements, the first and last element plus random ones; for each, every
  operand's exact read set against the output-to-input maps, and up to 4 (operand element,
  output element) pairs per operand against the input-to-output maps;
* per operand: ``max(1, samples // 2)`` elements, the first and last plus random ones; for each
  and each output, up to 4 of the output elements the input-to-output maps give are walked back.
Cost: each computation's post-order and, per operand, the instructions that can reach it are
found once per target; a walk for one operand visits only those; reference read sets are
memoised, per module for ops whose read sets follow from opcode, shapes and attributes alone;
identical fusions of a module (same structure) are verified once.
"""
from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np

from .affine import IndexingMap
from .context import current, register_table, remember
from .api import SelectedTarget
from .fusion import callee_of, input_to_output, output_to_input
from .fusion.fingerprint import computation_fingerprint, instruction_structure
from .fusion.traverse import post_order
from .reference import (ELEMENT_READ_SETS, SET_READ_SETS, NoReference, element_read_sets,
                        operand_element_read, read_set)
from .hlo.model import Computation, Instruction, Module
from .hlo.opcodes import ELEMENTWISE_OPCODES

# Budgets (hlo_index.context): verify_points_per_value, beyond which the walk is too costly and
# the target is skipped; verify_range_combinations, range-variable points a map may enumerate per element.
PAIRS_PER_ELEMENT = 4               # input-to-output: operand / output elements checked per sample


class Skip(Exception):
    """Verification of this target is not possible (no reference for an op, too large)."""


@dataclass
class VerifyOutcome:
    errors: list[str] = field(default_factory=list)     # mismatches, each naming the element
    notes: list[str] = field(default_factory=list)      # skipped targets and why
    checked_points: int = 0
    checked_input_points: int = 0                       # operand elements checked input-to-output


_RUNTIME_VALUES = register_table("verify.runtime_values")   # id(instr) -> (instr, values): identity memo


def runtime_values_for(instr: Instruction) -> dict[int, np.ndarray]:
    """Concrete offsets / indices for an op's integer operands, seeded by the op's opcode and
    shapes (not its name: identical computations get identical values).

    Any values will do: maps with runtime variables describe the union over every feasible value,
    so the reference's read set for one choice must be contained in it.
    """
    memo = current().tables[_RUNTIME_VALUES]
    hit = memo.get(id(instr))
    if hit is not None and hit[0] is instr:
        return hit[1]
    bound = max((max(o.shape.dims, default=1) for o in instr.operands if not o.shape.is_tuple), default=1)
    rng = np.random.default_rng(_stable_seed((instr.opcode, str(instr.shape),
                                              tuple(str(o.shape) for o in instr.operands))))
    values = {j: rng.integers(0, bound + 1, size=o.shape.dims, dtype=np.int64)
              for j, o in enumerate(instr.operands)
              if not o.shape.is_tuple and o.shape.element_type[:1] in ("s", "u") and o.opcode != "constant"}
    memo[id(instr)] = (instr, values)
    return values


def _stable_seed(value) -> int:
    """A seed from a value's text: the same in every run and process (``hash()`` of a str is not)."""
    return zlib.crc32(repr(value).encode())


def _read_set(instr: Instruction, out: int, point: tuple, operand: int) -> set:
    try:
        try:
            return read_set(instr, out, point, operand, None)
        except ValueError as exc:
            if "runtime value" not in str(exc):
                raise
            return read_set(instr, out, point, operand, runtime_values_for(instr))
    except NoReference as exc:
        raise Skip(str(exc)) from None
    except Exception as exc:  # the oracle cannot evaluate this configuration (e.g. runtime data)
        raise _reference_failed(instr, exc) from None


def _reference_failed(instr: Instruction, exc: Exception) -> Skip:
    """The Skip for a reference that cannot evaluate ``instr`` in this configuration."""
    return Skip(f"reference for {instr.opcode} '{instr.name}' failed: {type(exc).__name__}: {exc}")


def _element_read_sets(instr: Instruction, out: int, point: tuple, operand: int) -> dict[int, set]:
    """Per tuple element of the operand, the reference's read set (several for conditional / while)."""
    if instr.opcode not in ELEMENT_READ_SETS:
        return {operand_element_read(instr, out): _read_set(instr, out, point, operand)}
    try:
        return element_read_sets(instr, out, point, operand)
    except Exception as exc:  # the oracle cannot evaluate this configuration
        raise _reference_failed(instr, exc) from None


# Ops whose reference read sets follow from opcode, shapes (layouts included) and attributes alone:
# no callee, no operand literal, no runtime value. Their read sets are shared between targets.
_SHAPE_ONLY_OPCODES = frozenset(ELEMENTWISE_OPCODES) | {
    "broadcast", "bitcast", "transpose", "reshape", "copy", "slice", "reverse", "concatenate",
    "pad", "convert", "bitcast-convert", "reduce-precision", "dot"}
_STRUCTURE_IDS = "structure ids"  # a key of the shared memo: structure -> small int
SHARED_READS_LIMIT = 1 << 20   # entries of a module's shared memo; beyond it, it starts afresh


def _structure(instr: Instruction):
    """Everything a shape-only reference reads of ``instr``; None when its read sets may depend
    on more (then they are memoised per instruction object, for one target only)."""
    if instr.opcode not in _SHAPE_ONLY_OPCODES or instr.called:
        return None
    return instruction_structure(instr)


class _Walker:
    """Backward reference walks over one computation, for the length of one target's check.

    The post-order, and for each set of wanted parameters the instructions that can reach one of
    them, are found once; reference read sets are memoised by (instruction, output, point,
    operand). Keys hold the instruction objects themselves, alive as long as this walker."""

    def __init__(self, comp: Computation, walkers: dict, reads: dict,
                 shared_reads: Optional[dict] = None) -> None:
        self.comp = comp
        self.order = post_order(comp)
        self.walkers = walkers          # Computation -> _Walker, shared by the callees' walkers
        self.reads = reads              # (instr, out, point, operand) -> read set
        self.shared_reads = {} if shared_reads is None else shared_reads  # (structure, ...) -> set
        self.structure_ids = self.shared_reads.setdefault(_STRUCTURE_IDS, {})
        self._readers: dict[Instruction, tuple] = {}
        self._visits: dict[tuple, tuple] = {}
        self._params: Optional[dict[Instruction, frozenset]] = None
        self._orders: dict[Optional[frozenset], list[Instruction]] = {None: self.order[::-1]}
        self._plans: dict[Optional[frozenset], list[tuple]] = {}

    def _reverse_order(self, wanted: Optional[frozenset]) -> list[Instruction]:
        """Instructions (users first) that can reach a parameter in ``wanted`` (None: all)."""
        found = self._orders.get(wanted)
        if found is None:
            if self._params is None:
                params: dict[Instruction, frozenset] = {}
                for instr in self.order:
                    if instr.opcode == "parameter":
                        params[instr] = frozenset((instr.parameter_number,))
                    else:
                        params[instr] = frozenset().union(*(params.get(o, frozenset()) for o in instr.operands))
                self._params = params
            found = [i for i in reversed(self.order) if not self._params[i].isdisjoint(wanted)]
            self._orders[wanted] = found
        return found

    def _plan(self, wanted: Optional[frozenset]) -> list[tuple]:
        """One step per instruction of ``_reverse_order(wanted)``, with what a walk asks of it
        found once: (instr, its outputs, parameter number or None, memo, owner, callee walker,
        visited operands, set read-set function or None)."""
        plan = self._plans.get(wanted)
        if plan is None:
            plan = []
            for instr in self._reverse_order(wanted):
                outputs = range(instr.shape.num_outputs)
                if instr.opcode == "parameter":
                    plan.append((instr, outputs, instr.parameter_number, None, None, None, (), None))
                    continue
                memo, owner, callee_walker = self._reader(instr)
                whole = SET_READ_SETS.get(instr.opcode)
                if whole is not None:   # with the tuple element each output reads, found once
                    whole = (whole, tuple(operand_element_read(instr, out) for out in outputs))
                plan.append((instr, outputs, None, memo, owner, callee_walker,
                             self._visited_operands(instr, wanted), whole))
            self._plans[wanted] = plan
        return plan

    def walk(self, output_index: int, point: tuple,
             wanted: Optional[frozenset] = None) -> dict[tuple[int, int], set]:
        """(parameter number, tuple element) -> exact set of its elements read by ``point`` of the
        output; with ``wanted``, only for those parameters (the rest of the graph is not walked).
        (A heap of only the instructions reached was tried: most walks reach most of the order,
        and the heap cost more than the steps it skipped.)"""
        need: dict[tuple[Instruction, int], set] = {(self.comp.root, output_index): {tuple(point)}}
        found: dict[tuple[int, int], set] = {}
        limit = current().budgets.verify_points_per_value
        for instr, outputs, parameter, memo, owner, callee_walker, operands, whole in self._plan(wanted):
            if not need:   # every point reached the parameters: the rest of the order is not read
                break
            for out in outputs:
                points = need.pop((instr, out), None)
                if not points:
                    continue
                if parameter is not None:
                    found[(parameter, out)] = points
                    continue
                if len(points) > limit:
                    raise Skip(f"budget verify_points_per_value={limit}: more than {limit} elements of "
                               f"'{instr.name}' are read")
                if callee_walker is not None:
                    for p in points:
                        for (param, element), got in callee_walker.walk(out, p).items():
                            need.setdefault((instr.operands[param], element), set()).update(got)
                    continue
                if whole is not None:   # the read set of all the points at once (elementwise ops)
                    reads, elements = whole
                    element = elements[out]
                    for j, operand in operands:
                        try:
                            got = reads(instr, out, points, j)
                        except Exception as exc:  # the oracle cannot evaluate this configuration
                            raise _reference_failed(instr, exc) from None
                        if got:
                            key = (operand, element)
                            pending = need.get(key)
                            if pending is None:
                                need[key] = got   # a fresh set the reference made for this call
                            else:
                                pending.update(got)
                    continue
                for p in points:
                    for j, operand in operands:
                        key = (owner, out, p, j)
                        per_element = memo.get(key)
                        if per_element is None:
                            per_element = memo[key] = _element_read_sets(instr, out, p, j)
                        for element, got in per_element.items():
                            if got:
                                need.setdefault((operand, element), set()).update(got)
        return found

    def _reader(self, instr: Instruction) -> tuple:
        """(memo of read sets, its key's owner, the callee's walker or None) of ``instr``, found
        once per walker: the owner is the instruction, or a small int per distinct structure
        for shape-only ops (their read sets are shared between targets)."""
        reader = self._readers.get(instr)
        if reader is None:
            structure = _structure(instr)
            if structure is not None:
                ids = self.structure_ids
                structure = ids.setdefault(structure, len(ids))
            memo, owner = (self.reads, instr) if structure is None else (self.shared_reads, structure)
            callee = callee_of(instr)
            callee_walker = None
            if callee is not None:
                callee_walker = self.walkers.get(callee)
                if callee_walker is None:
                    callee_walker = self.walkers[callee] = _Walker(callee, self.walkers, self.reads,
                                                                   self.shared_reads)
            reader = self._readers[instr] = (memo, owner, callee_walker)
        return reader

    def _visited_operands(self, instr: Instruction, wanted: Optional[frozenset]) -> tuple:
        """``(position, operand)`` of the operands a walk for ``wanted`` goes through."""
        key = (instr, wanted)
        found = self._visits.get(key)
        if found is None:
            found = self._visits[key] = tuple(
                (j, operand) for j, operand in enumerate(instr.operands)
                if wanted is None or not self._params.get(operand, frozenset()).isdisjoint(wanted))
        return found


def backward_read_sets(comp: Computation, output_index: int, point: tuple) -> dict[tuple[int, int], set]:
    """(parameter number, tuple element) -> exact set of its elements read by ``point`` of the output."""
    return _Walker(comp, {}, {}).walk(output_index, point)


def _single_op_read_sets(instr: Instruction, output_index: int, point: tuple) -> dict[tuple[int, int], set]:
    out = {}
    for j in range(len(instr.operands)):
        got = _read_set(instr, output_index, point, j)
        if got:
            out[(j, operand_element_read(instr, output_index))] = got
    return out


def runtime_as_range(m: IndexingMap) -> IndexingMap:
    """The same map with its runtime variables turned into trailing range variables: its read set
    at a point is the union over every feasible runtime value."""
    if not m.runtime_vars:
        return m
    from .affine import range_var, runtime_var
    from .affine.expr import replace_variables
    n = len(m.range_vars)
    swap = {runtime_var(i): range_var(n + i) for i in range(len(m.runtime_vars))}
    memo: dict = {}
    return IndexingMap(m.dims, tuple(m.range_vars) + tuple(rv.interval for rv in m.runtime_vars), (),
                       [replace_variables(e, swap.get, memo) for e in m.results],
                       [(replace_variables(e, swap.get, memo), iv) for e, iv in m.constraints])


def _checkable(maps: tuple[IndexingMap, ...]) -> list[IndexingMap]:
    out = []
    for m in maps:
        if m.is_undefined:
            raise Skip(f"map unknown: {m.undefined_reason}")
        if m.is_known_empty:
            continue
        m = runtime_as_range(m)
        combinations = 1
        for iv in m.range_vars:
            combinations *= max(iv.size, 1)
        if combinations > current().budgets.verify_range_combinations:
            raise Skip(f"a map has {combinations} range-variable combinations per element")
        out.append(m)
    return out


def predicted_rows(maps: tuple[IndexingMap, ...], point: tuple, distinct: bool = True) -> np.ndarray:
    """The elements the maps give at ``point`` (union over the maps and every feasible runtime
    value), as distinct rows in ascending order: the order of ``sorted(predicted_read_set())``,
    without making a Python tuple of each (an image can hold every element of the output)."""
    from .affine.evaluate import relation_at
    found = []
    width = None
    for m in _checkable(maps):
        _, results = relation_at(m, np.array([point], dtype=np.int64).reshape(1, m.num_dims), ())
        width = results.shape[1]
        found.append(results)
    if not found:
        return np.zeros((0, len(point) if width is None else width), np.int64)
    rows = np.concatenate(found) if len(found) > 1 else found[0]
    return _distinct_rows(rows) if distinct else rows


def _distinct_rows(rows: np.ndarray) -> np.ndarray:
    if len(rows) < 2 or rows.shape[1] == 0:
        return rows[:1] if len(rows) and rows.shape[1] == 0 else rows
    if len(rows) <= 64:  # small images: Python's set is cheaper than numpy's call overhead
        return np.array(sorted(set(map(tuple, rows.tolist()))), dtype=np.int64)
    # distinct rows in lexicographic order, through one row-major linear index per row (a 1-D
    # sort is far cheaper than np.unique(axis=0))
    low = rows.min(axis=0)
    spans = rows.max(axis=0) - low + 1
    if float(np.prod(spans.astype(np.float64))) >= 2.0 ** 62:
        return np.unique(rows, axis=0)
    linear = np.sort(np.ravel_multi_index(tuple((rows - low).T), tuple(int(n) for n in spans)))
    keep = np.empty(len(linear), dtype=bool)
    keep[0] = True
    np.not_equal(linear[1:], linear[:-1], out=keep[1:])
    return np.stack(np.unravel_index(linear[keep], tuple(int(n) for n in spans)), axis=1) + low


def predicted_rows_many(maps: tuple[IndexingMap, ...], points: list[tuple],
                        distinct: bool = True) -> dict[tuple, np.ndarray]:
    """:func:`predicted_rows` for several points, with one evaluation of each map for all."""
    if len(points) < 2:
        return {p: predicted_rows(maps, p, distinct) for p in points}
    checkable = _checkable(maps)
    if checkable and not any(m.range_vars for m in checkable):
        # at most one element per map and point: plain integers, without numpy's cost per call
        width = checkable[0].num_results
        out = {}
        for p in points:
            images = [image for image in (_image_at(m, p) for m in checkable) if image is not None]
            if distinct:
                images = sorted(set(images))
            out[p] = np.array(images, dtype=np.int64).reshape(len(images), width)
        return out
    from .affine.evaluate import relation_at
    rank = len(points[0])
    array = np.array(points, dtype=np.int64).reshape(len(points), rank)
    dims, results = [], []
    for m in _checkable(maps):
        feasible, got = relation_at(m, array, ())
        dims.append(feasible[:, :rank])
        results.append(got)
    out = {}
    if not results:
        return {p: np.zeros((0, 0), np.int64) for p in points}
    dims_all = np.concatenate(dims)
    results_all = np.concatenate(results)
    # rows grouped by the point they belong to, through one linear index per point of the box the
    # points span (every row's dims are one of the points)
    low = array.min(axis=0)
    spans = tuple(int(n) for n in array.max(axis=0) - low + 1)
    if rank == 0 or float(np.prod(np.array(spans, dtype=np.float64))) >= 2.0 ** 62:
        return {p: predicted_rows(maps, p, distinct) for p in points}
    row_keys = np.ravel_multi_index(tuple((dims_all - low).T), spans)
    order = np.argsort(row_keys, kind="stable")
    row_keys, results_all = row_keys[order], results_all[order]
    point_keys = np.ravel_multi_index(tuple((array - low).T), spans)
    starts = np.searchsorted(row_keys, point_keys, "left")
    ends = np.searchsorted(row_keys, point_keys, "right")
    for p, lo, hi in zip(points, starts.tolist(), ends.tolist()):
        rows = results_all[lo:hi]
        out[p] = _distinct_rows(rows) if distinct else rows
    return out


def predicted_read_set(maps: tuple[IndexingMap, ...], point: tuple) -> set:
    """Union over the maps (and over every feasible runtime value) of the elements they give."""
    from .affine.evaluate import relation_at
    total: set = set()
    for m in _checkable(maps):
        if not m.range_vars:   # one element at most: plain integers, without numpy's cost per call
            image = _image_at(m, point)
            if image is not None:
                total.add(image)
            continue
        _, results = relation_at(m, np.array([point], dtype=np.int64).reshape(1, m.num_dims), ())
        total.update(map(tuple, results.tolist()))
    return total


def _gives(checkable: list[IndexingMap], x: tuple, y: tuple) -> Optional[bool]:
    """Whether one of the maps (``_checkable``'s: no runtime variables) sends ``x`` to ``y``,
    decided by one evaluation per map where every range variable is a result of its own (a
    broadcast's, a reduction's): ``y`` then fixes its value. None when some map that might give
    ``y`` has a range variable no result fixes (the caller enumerates)."""
    from .affine.evaluate import evaluate_expr
    from .affine.expr import DIM, RANGE, SUM
    undecided = False
    for m in checkable:
        if len(m.results) != len(y) or not all(b.lo <= v <= b.hi for b, v in zip(m.dims, x)):
            continue
        env = {(DIM, i): int(v) for i, v in enumerate(x)}
        pinned_ok = True
        for e, want in zip(m.results, y):
            if e.kind == RANGE:
                key = (RANGE, e.value)
                if env.get(key, want) != want:
                    pinned_ok = False
                    break
                env[key] = int(want)
        if not pinned_ok:
            continue
        for e, want in zip(m.results, y):   # then sums of range variables in a mixed radix
            if e.kind == SUM and any(a.kind == RANGE and (RANGE, a.value) not in env for a, _ in e.terms):
                pinned = _pin_mixed_radix(e, int(want), env, m.range_vars)
                if pinned is False:
                    pinned_ok = False
                    break
        if not pinned_ok:
            continue
        if any((RANGE, k) not in env for k in range(len(m.range_vars))):
            undecided = True
            continue
        if not all(b.lo <= env[(RANGE, k)] <= b.hi for k, b in enumerate(m.range_vars)):
            continue
        memo: dict = {}
        if all(b.lo <= evaluate_expr(e, env, memo) <= b.hi for e, b in m.constraints) \
                and all(evaluate_expr(e, env, memo) == want for e, want in zip(m.results, y)):
            return True
    return None if undecided else False


def _pin_mixed_radix(e, want: int, env: dict, range_vars) -> Optional[bool]:
    """Fix the range variables of a result ``c + sum(k_i * s_i) + rest`` (``rest`` free of
    unfixed range variables) from its value ``want``, where the coefficients form a mixed radix
    (each larger than what all smaller terms can add: ``s0 * 128 + s1`` with s1 in [0, 127]), so
    at most one choice of the s_i gives ``want``: found greedily. False when none does; None when
    the result is not of that form (nothing fixed)."""
    from .affine.evaluate import evaluate_expr
    from .affine.expr import RANGE
    unknown = []
    rest = e.value
    memo: dict = {}
    for atom, k in e.terms:
        if atom.kind == RANGE and (RANGE, atom.value) not in env:
            unknown.append((k, atom.value))
        elif any(v.kind == RANGE and (RANGE, v.value) not in env for v in atom.variables()):
            return None
        else:
            rest += k * evaluate_expr(atom, env, memo)
    target = want - rest
    if all(k < 0 for k, _ in unknown):   # -k_i * s_i: the same question with both sides negated
        unknown, target = [(-k, v) for k, v in unknown], -target
    if any(k <= 0 for k, _ in unknown):
        return None
    unknown.sort(reverse=True)
    spans = [range_vars[v].hi - range_vars[v].lo for _, v in unknown]
    if any(span < 0 for span in spans):
        return False
    below = 0   # what the smaller terms can add at most
    for (k, _), span in zip(reversed(unknown), reversed(spans)):
        if k <= below:
            return None   # not a mixed radix: several choices may give the same value
        below += k * span
    target -= sum(k * range_vars[v].lo for k, v in unknown)   # offsets from each lower bound
    if target < 0:
        return False
    for (k, v), span in zip(unknown, spans):
        digit = target // k
        if digit > span:
            return False
        env[(RANGE, v)] = range_vars[v].lo + digit
        target -= digit * k
    return True if target == 0 else False


def _image_at(m: IndexingMap, point: tuple) -> Optional[tuple]:
    """The element a map without range (or runtime) variables gives at ``point``; None where the
    point is outside its domain or breaks a constraint (``relation_at``'s answer, for one point)."""
    from .affine.evaluate import evaluate_expr
    from .affine.expr import DIM
    env = {}
    for i, (b, x) in enumerate(zip(m.dims, point)):
        if not b.lo <= x <= b.hi:
            return None
        env[(DIM, i)] = int(x)
    memo: dict = {}
    for e, b in m.constraints:
        if not b.lo <= evaluate_expr(e, env, memo) <= b.hi:
            return None
    return tuple(int(evaluate_expr(e, env, memo)) for e in m.results)


def _sample_points(dims: tuple[int, ...], count: int, rng: random.Random) -> list[tuple]:
    if any(d == 0 for d in dims):
        return []
    points = {tuple(0 for _ in dims), tuple(d - 1 for d in dims)}
    while len(points) < min(count, int(np.prod(dims, dtype=np.int64)) if dims else 1):
        points.add(tuple(rng.randrange(d) for d in dims))
    return sorted(points)


def _fmt(point) -> str:
    return "{" + ", ".join(str(i) for i in point) + "}"


def _identity(selected: SelectedTarget):
    """A key equal for targets that are the same computation up to names (None: no dedup)."""
    target = selected.target
    comp = target if isinstance(target, Computation) else callee_of(target)
    if comp is None:
        return None
    return (selected.kind, computation_fingerprint(comp))


def verify_target(selected: SelectedTarget, module: Optional[Module] = None, samples: int = 8,
                  seed: Optional[int] = None, input_to_output_too: bool = True,
                  verified: Optional[dict] = None) -> VerifyOutcome:
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
    shared = None
    if verified is not None:
        shared = verified.setdefault(_SHARED_READS, {})
        if len(shared) > SHARED_READS_LIMIT:
            shared.clear()
    outcome = _verify_target(selected, samples, seed, input_to_output_too, shared)
    if key is not None and not outcome.errors and not outcome.notes:
        verified[key] = outcome  # only clean outcomes: errors and notes name instructions
    return outcome


_SHARED_READS = "reference read sets of shape-only ops"   # a key of ``verified`` (a str: no clash)


def _verify_target(selected: SelectedTarget, samples: int, seed: int, input_to_output_too: bool,
                   shared_reads: Optional[dict] = None) -> VerifyOutcome:
    outcome = VerifyOutcome()
    target = selected.target
    comp = target if isinstance(target, Computation) else callee_of(target)
    rows = output_to_input(target)
    walker = None
    if comp is not None:
        walker = _Walker(comp, {}, {}, shared_reads)
        shape = comp.root.shape
    else:
        shape = target.shape
    truth_cache: dict = {}

    def exact(out: int, point: tuple, operand: Optional[int] = None) -> dict:
        """Exact read sets of ``point``; with ``operand``, those of that operand at least."""
        hit = truth_cache.get((out, point))
        if hit is None and operand is not None:
            hit = truth_cache.get((out, point, operand))
        if hit is None:
            if walker is None:
                hit = _single_op_read_sets(target, out, point)
            elif operand is None:
                hit = walker.walk(out, point)
            else:
                hit = walker.walk(out, point, frozenset((operand,)))
            truth_cache[(out, point) if operand is None else (out, point, operand)] = hit
        return hit

    sampled: list[tuple[int, tuple]] = []
    read_set_of = _read_sets_memo(shared_reads)
    elements_of = _shared_memo(shared_reads, "sampled elements", _sampled_elements)
    try:
        if any(shape.leaf(out).num_elements for out in range(shape.num_outputs)):
            for row in rows:  # a map too large to enumerate skips the target before any walk
                _checkable(row.maps)
        for out in range(shape.num_outputs):
            dims = shape.leaf(out).dims
            for point in elements_of(seed, dims, samples):
                truth_all = exact(out, point)
                sampled.append((out, point))
                outcome.checked_points += 1
                for row in rows:
                    if row.output != out:
                        continue
                    truth = truth_all.get((row.operand, row.operand_element), set())
                    given = read_set_of(row.maps, point)
                    missing = sorted(truth - given)
                    if missing:
                        outcome.errors.append(
                            f"{selected.kind} '{target.name}': output {out} element {_fmt(point)} reads "
                            f"operand {row.operand} element {_fmt(missing[0])}, which no map gives"
                            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
                    exempt = any(m.runtime_vars for m in row.maps)
                    extra = sorted(given - truth)
                    if extra and not exempt:
                        outcome.errors.append(
                            f"{selected.kind} '{target.name}': the maps say output {out} element {_fmt(point)} "
                            f"reads operand {row.operand} element {_fmt(extra[0])}, which it does not"
                            + (f" (and {len(extra) - 1} more)" if len(extra) > 1 else ""))
    except Skip as exc:
        outcome.notes.append(f"verification skipped: {exc}")
        return outcome
    if input_to_output_too:
        try:
            _verify_input_to_output(selected, exact, sampled, samples, seed, outcome, shared_reads)
        except Skip as exc:
            outcome.notes.append(f"input-to-output verification skipped: {exc}")
    return outcome


def _operand_shapes(target) -> list:
    if isinstance(target, Computation):
        count = 1 + max(target.parameters, default=-1)
        return [target.parameters[n].shape if n in target.parameters else None for n in range(count)]
    return [o.shape for o in target.operands]


def _rng(seed: int, *parts) -> random.Random:
    """A generator for one sampling decision, from the base seed and what the decision is about:
    equal questions (same dimensions, same image) get equal answers, so walks shared between
    operands and targets are memoised rather than repeated. (``random.Random`` with an int seed
    gives the same stream on every platform and is far cheaper to make than numpy's.)"""
    return random.Random(_stable_seed((seed, parts)))


def _sampled_elements(seed: int, dims: tuple[int, ...], count: int) -> tuple[tuple, ...]:
    """The seeded sample of ``count`` elements of ``dims`` (memoised by callers: on gpt12, 616
    distinct sampling questions among 103,322, each a generator made and run)."""
    return tuple(_sample_points(dims, count, _rng(seed, "elements", dims)))


def _sampled_indices(seed: int, about: tuple, n: int, k: int) -> tuple[int, ...]:
    """``k`` seeded positions among ``n``, for the decision ``about``."""
    return tuple(_rng(seed, *about, n).sample(range(n), k))


def _shared_memo(shared: Optional[dict], name: str, compute):
    """``compute`` memoised in the module's shared memo under ``name``: a module's targets ask
    for the same answers again and again (the same operand maps at the same seeded elements:
    98% of the image asks on gpt12). At most ``Budgets.verify_image_memo`` entries, then afresh.
    Answers are shared: callers only read them."""
    memo = {} if shared is None else shared.setdefault(name, {})
    limit = current().budgets.verify_image_memo

    def memoised(*key):
        hit = memo.get(key)
        return remember(memo, key, compute(*key), limit) if hit is None else hit
    return memoised


def _images_memo(shared: Optional[dict]):
    """``predicted_rows_many(maps, points, distinct)``, memoised (``points`` a tuple)."""
    return _shared_memo(shared, "images of input-to-output maps", predicted_rows_many)


def _gives_memo(shared: Optional[dict]):
    """``_gives(checkable, x, y)`` of a set of maps, memoised by the set's identity (``maps``,
    kept in the entry; ``checkable`` is ``_checkable(maps)``): targets check the same shared maps
    at the same seeded elements. At most ``Budgets.verify_image_memo`` entries, then afresh."""
    memo = {} if shared is None else shared.setdefault("pairs given by input-to-output maps", {})
    limit = current().budgets.verify_image_memo

    def gives(maps: tuple, checkable: list, x: tuple, y: tuple) -> Optional[bool]:
        key = (id(maps), x, y)
        hit = memo.get(key)
        if hit is None or hit[0] is not maps:
            hit = remember(memo, key, (maps, _gives(checkable, x, y)), limit)
        return hit[1]
    return gives


def _read_sets_memo(shared: Optional[dict]):
    """``predicted_read_set(maps, point)``, memoised."""
    return _shared_memo(shared, "read sets of output-to-input maps", predicted_read_set)


def _verify_input_to_output(selected: SelectedTarget, exact, sampled, samples: int,
                            seed: int, outcome: VerifyOutcome, shared: Optional[dict] = None) -> None:
    images_of = _images_memo(shared)
    gives = _gives_memo(shared)
    elements_of = _shared_memo(shared, "sampled elements", _sampled_elements)
    indices_of = _shared_memo(shared, "sampled indices", _sampled_indices)
    target = selected.target
    name = f"{selected.kind} '{target.name}'"
    # (operand, tuple element) -> [(output, maps)]: a tuple-shaped operand has rows per element
    maps_of: dict[tuple[int, int], list] = {}
    for row in input_to_output(target):
        maps_of.setdefault((row.operand, row.operand_element), []).append((row.output, row.maps))
    maps_at = {(*key, out): maps for key, rows in maps_of.items() for out, maps in rows}
    shapes = _operand_shapes(target)
    arrays = dict(_array_operands(shapes))   # (operand, element) -> array shape
    # 1. nothing missing: each pair the reference finds for a sampled output element is in the maps
    wanted: dict[tuple[int, int, int], list] = {}  # (operand, element, output) -> [(operand element, point)]
    for out, point in sampled:
        for (operand, element), read in exact(out, point).items():
            if (operand, element) not in arrays:
                continue
            read = sorted(read)
            chosen = indices_of(seed, ("read", out, point), len(read), min(PAIRS_PER_ELEMENT, len(read)))
            wanted.setdefault((operand, element, out), []).extend((read[int(k)], point) for k in chosen)
    for (operand, element, out), pairs in wanted.items():
        maps = maps_at.get((operand, element, out), ())
        checkable = _checkable(maps)
        verdicts = [(x, point, gives(maps, checkable, x, point)) for x, point in pairs]
        undecided = sorted({x for x, _, verdict in verdicts if verdict is None})
        images = images_of(maps, tuple(undecided), False) if undecided else {}
        for x, point, verdict in verdicts:
            if verdict is None:   # from the enumerated image
                rows = images[x]
                verdict = bool(len(rows)) and bool((rows == np.array(point, dtype=np.int64)).all(axis=1).any())
            if not verdict:
                outcome.errors.append(
                    f"{name}: operand {_operand_text(operand, element, shapes)} element {_fmt(x)} is read "
                    f"by output {out} element {_fmt(point)}, which no input-to-output map gives")
    # 2. nothing extra: outputs the maps give for sampled operand elements really read them
    checks = []  # (operand, tuple element, operand element, output, output element)
    for (operand, element), shape in arrays.items():
        xs = elements_of(seed, shape.dims, max(1, samples // 2))
        outcome.checked_input_points += len(xs)
        for out, maps in maps_of.get((operand, element), ()):
            if not maps or any(m.runtime_vars for m in maps):
                continue
            images = images_of(maps, tuple(xs), True)
            for x in xs:
                given = images[x]
                if not len(given):
                    continue
                chosen = indices_of(seed, ("image", out, x), len(given), min(PAIRS_PER_ELEMENT, len(given)))
                for k in chosen:
                    checks.append((operand, element, x, out, tuple(int(v) for v in given[int(k)])))
    # an output element checked for several operands is walked back once for all of them
    readers: dict[tuple, set] = {}
    for operand, _, _, out, y in checks:
        readers.setdefault((out, y), set()).add(operand)
    for operand, element, x, out, y in checks:
        shared = len(readers[(out, y)]) > 1
        if x not in exact(out, y, None if shared else operand).get((operand, element), set()):
            outcome.errors.append(
                f"{name}: the input-to-output maps say operand {_operand_text(operand, element, shapes)} "
                f"element {_fmt(x)} is read by output {out} element {_fmt(y)}, which does not read it")


def _array_operands(shapes: list):
    """(operand, tuple element) and the array shape of every array an operand is or holds
    (elements of a tuple-shaped operand one by one; nested tuples are not addressed)."""
    for operand, shape in enumerate(shapes):
        if shape is None:
            continue
        if not shape.is_tuple:
            yield (operand, 0), shape
            continue
        for element in range(shape.num_outputs):
            leaf = shape.leaf(element)
            if not leaf.is_tuple:
                yield (operand, element), leaf


def _operand_text(operand: int, element: int, shapes: list) -> str:
    shape = shapes[operand] if operand < len(shapes) else None
    return f"{operand}" if shape is None or not shape.is_tuple else f"{operand} (tuple element {element})"
