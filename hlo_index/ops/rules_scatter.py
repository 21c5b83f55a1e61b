"""scatter: updates land on windows addressed by index vectors; the combiner merges them.

Updates and indices: a start known only at runtime is a runtime variable for the start at the
batch position of the element being mapped; a window starting outside ``[0, dim - size]`` is
skipped (XLA's ScatterExpander), so no value of that variable stands for it.

Output ``j`` -> operand ``i`` (``i`` < the number of operands) is exact. Where no update lands,
output ``j`` is operand ``j``. Where updates land, it is the combiner's output ``j`` applied once
per landing update, so it reads the old values of the operands the combiner's output ``j``
depends on through its "current value" parameters, followed as many times as updates land
(``combiner_reads_old``). When that set is the same for one landing as for two (every combiner
jax emits: add, max, overwrite, the variadic argmax pair), the pieces are:

* operand ``j`` read everywhere when the combiner reads its old value (add, max, ...): the identity;
* operand ``i != j`` read only where an update lands: the update map's domain;
* operand ``j`` read only where *no* update lands (an overwriting combiner): the complement of the
  landing windows: exact as boxes when every start is static or the indices are a constant; as
  pieces constrained on the starts when there is one update window (its runtime variables then
  take the dim's size for a window that is out of bounds and skipped); else UNDEFINED (which
  elements are overwritten depends on every index vector at once).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..affine import Expr, IndexingMap, Interval, RuntimeVar, const, dim, range_var, runtime_var
from ..context import budget_reason, current
from ..hlo.model import Computation, Instruction
from .registry import OperandMaps, input_to_output_rule, output_to_input_rule
from .rules_dynamic import INDEXED_READS
from .rules_reduce import RangeVars
from .shape_maps import full_interval
from .starts import Starts, constant_values

if TYPE_CHECKING:
    import numpy as np

    from .windows import WindowPlacement

# ---- where updates land -------------------------------------------------------------------


def _landing(instr: Instruction, dims: Sequence[int]) -> tuple[IndexingMap | None, IndexingMap, Starts]:
    """(output element -> the update elements landing on it, or None when none ever lands; the
    same relation with the output element as result: "some update lands here"; the starts)."""
    from .windows import WindowPlacement  # gather and scatter only: not every run's import

    placement = WindowPlacement.of_scatter(instr)
    domain = [full_interval(n) for n in dims]
    ranges = RangeVars()
    batch_exprs = placement.operand_batch_exprs(ranges)
    starts = Starts()
    results, constraints = placement.operand_to_windowed(batch_exprs, starts)
    if starts.never_valid:
        return None, IndexingMap.known_empty(len(dims), len(dims)), starts
    identity = [dim(a) for a in range(len(dims))]
    return (
        IndexingMap(domain, ranges.intervals, starts.runtime, results, constraints),
        IndexingMap(domain, ranges.intervals, starts.runtime, identity, constraints),
        starts,
    )


# ---- what the combiner reads --------------------------------------------------------------


def _parameters_reached(comp: Computation, start: Instruction) -> frozenset[int]:
    """Parameter numbers ``start`` depends on (any path through operands: a data dependence)."""
    seen: set[int] = set()
    found: set[int] = set()
    stack = [start]
    while stack:
        instr = stack.pop()
        if id(instr) in seen:
            continue
        seen.add(id(instr))
        if instr.opcode == "parameter":
            found.add(instr.parameter_number)  # type: ignore[arg-type]  # a parameter has its number
        stack.extend(instr.operands)
    return frozenset(found)


def combiner_reads_old(instr: Instruction, count: int) -> list[frozenset[int] | None]:
    """Per output ``j``: the operands whose old values output ``j`` reads where updates land, or
    None when that depends on how many updates land on the element.

    The combiner's output ``j`` depends on "current value" parameters ``D(j)`` (< count); with
    ``L`` updates landing the old values read are ``D`` followed ``L`` times. When following it
    once more changes nothing, the set is the same for every ``L >= 1``. Without a combiner
    (a hand-built instruction) every current value is taken as read.
    """
    comp = instr.called.get("to_apply")
    everything = frozenset(range(count))
    if comp is None:
        return [everything] * count
    root = comp.root
    assert root is not None  # a linked computation has a root
    if count == 1:
        element_roots = [root]
    elif root.opcode == "tuple" and len(root.operands) == count:
        element_roots = list(root.operands)
    else:
        element_roots = [root] * count
    direct = [frozenset(p for p in _parameters_reached(comp, r) if p < count) for r in element_roots]
    out: list[frozenset[int] | None] = []
    for j in range(count):
        once = direct[j]
        twice = frozenset().union(*(direct[i] for i in once))
        out.append(once if once == twice else None)
    return out


# ---- where no update lands ----------------------------------------------------------------


def _boxes(mask: np.ndarray) -> list[list[tuple[int, int]]]:
    """The true part of ``mask`` as disjoint boxes (per axis an inclusive interval): runs of equal
    slices along the first axis, each split further along the next."""
    import numpy as np

    if mask.ndim == 0:
        return [[]] if bool(mask) else []
    if mask.all():
        return [[(0, mask.shape[0] - 1)] + [(0, n - 1) for n in mask.shape[1:]]]
    if not mask.any():
        return []
    out: list[list[tuple[int, int]]] = []
    lo = 0
    for hi in range(1, mask.shape[0] + 1):
        if hi == mask.shape[0] or not np.array_equal(mask[hi], mask[lo]):
            out.extend([(lo, hi - 1)] + rest for rest in _boxes(mask[lo]))
            lo = hi
    return out


def _too_many_updates(update_dims: Sequence[int], what: str) -> IndexingMap | None:
    import numpy as np

    budgets = current().budgets
    total = int(np.prod(update_dims, dtype=np.int64))
    if total > budgets.scatter_landing_points:
        return IndexingMap.undefined(
            budget_reason(
                "scatter_landing_points", budgets.scatter_landing_points, f"{what}: {total} update elements to place"
            )
        )
    return None


def _static_not_landed(dims: Sequence[int], update_map_in2out: IndexingMap, what: str) -> tuple[IndexingMap, ...]:
    """Complement of the landing windows when every start is static: enumerated from the update
    elements (a budget), as boxes (at most ``maps_per_value`` of them)."""
    import numpy as np

    update_dims = [iv.size for iv in update_map_in2out.dims]
    too_many = _too_many_updates(update_dims, what)
    if too_many is not None:
        return (too_many,)
    mask = np.ones(tuple(dims), dtype=bool)
    _, landed = update_map_in2out.enumerate(limit=max(int(np.prod(update_dims, dtype=np.int64)), 1) * 4)
    if len(landed):
        mask[tuple(landed.T)] = False
    return _boxes_as_maps(dims, mask, what)


def _constant_indices_not_landed(instr: Instruction, dims: Sequence[int], what: str) -> tuple[IndexingMap, ...] | None:
    """Complement of the landing windows when the indices are a ``constant`` (not uniform, so no
    start folds into the maps): every update element placed from the literal, out-of-bounds
    windows skipped. None when the indices are not a constant."""
    import numpy as np

    from .windows import WindowPlacement, batch_position

    placement = WindowPlacement.of_scatter(instr)
    update_dims, window_size = placement.windowed_dims, placement.window_size
    values = constant_values(placement.indices)
    if values is None:
        return None
    too_many = _too_many_updates(update_dims, what)
    if too_many is not None:
        return (too_many,)
    ivd = placement.index_vector_dim
    vectors = values[..., None] if ivd == values.ndim else np.moveaxis(values, ivd, -1)
    grid = np.indices(tuple(update_dims), dtype=np.int64).reshape(len(update_dims), -1)
    batch = tuple(grid[u] for u in placement.batch_dims)
    per_update = vectors[batch] if batch else np.broadcast_to(vectors, (grid.shape[1], vectors.shape[-1]))
    start = np.zeros((len(dims), grid.shape[1]), dtype=np.int64)
    for k, d in enumerate(placement.start_dims):
        start[d] = per_update[:, k]
    for d, j in zip(placement.operand_batching_dims, placement.indices_batching_dims):
        start[d] = batch[batch_position(j, ivd)]
    valid = np.ones(grid.shape[1], dtype=bool)
    for d, n in enumerate(dims):
        valid &= (start[d] >= 0) & (start[d] <= n - window_size[d])
    for d, u in zip(placement.window_dims, placement.offset_dims):
        start[d] += grid[u]
    mask = np.ones(tuple(dims), dtype=bool)
    mask[tuple(start[:, valid])] = False
    return _boxes_as_maps(dims, mask, what)


def _boxes_as_maps(dims: Sequence[int], mask: np.ndarray, what: str) -> tuple[IndexingMap, ...]:
    """The true part of ``mask`` as identity maps over boxes (at most ``maps_per_value``)."""
    budgets = current().budgets
    boxes = _boxes(mask)
    if len(boxes) > budgets.maps_per_value:
        return (
            IndexingMap.undefined(
                budget_reason("maps_per_value", budgets.maps_per_value, f"{what}: {len(boxes)} boxes")
            ),
        )
    domain = [full_interval(n) for n in dims]
    identity = [dim(a) for a in range(len(dims))]
    return tuple(
        IndexingMap(
            domain,
            (),
            (),
            identity,
            [(dim(a), Interval(lo, hi)) for a, (lo, hi) in enumerate(box) if (lo, hi) != (0, dims[a] - 1)],
        )
        for box in boxes
    )


def _one_window_not_landed(
    placement: WindowPlacement, dims: Sequence[int], starts: list[Expr]
) -> tuple[IndexingMap, ...]:
    """Complement of the one update window: per dim, the two sides of it. A runtime start is a
    runtime variable in ``[0, n]``: the start when it is in range, ``n`` when it is not (the
    window is then skipped and nothing is overwritten; ``d - n`` is below 0 everywhere)."""
    indices, window_size = placement.indices, placement.window_size
    domain = [full_interval(n) for n in dims]
    identity = [dim(a) for a in range(len(dims))]
    # one runtime variable per runtime start, in index-vector order (as the update map numbers them)
    runtime: list[RuntimeVar] = []
    variable_of: dict[int, Expr] = {}
    for k, axis in enumerate(placement.start_dims):
        if not starts[axis].is_constant:
            n, w = dims[axis], window_size[axis]
            runtime.append(
                RuntimeVar(
                    Interval(0, n),
                    f"%{indices.name}[..., {k}] (start of operand dim {axis} "
                    f"when in [0, {n - w}]; {n} when out of range: the window "
                    f"is skipped)",
                )
            )
            variable_of[axis] = runtime_var(len(runtime) - 1)
    sides = []
    for axis, (n, w, start) in enumerate(zip(dims, window_size, starts)):
        if start.is_constant:
            lo = start.constant_value
            sides += [(dim(axis), Interval(0, lo - 1)), (dim(axis), Interval(lo + w, n - 1))]
        else:
            offset = dim(axis) - variable_of[axis]
            sides += [(offset, Interval(-n, -1)), (offset, Interval(w, n - 1))]
    return tuple(IndexingMap(domain, (), runtime, identity, [side]) for side in sides if side[1].lo <= side[1].hi)


def _operand_maps(instr: Instruction, output_index: int) -> list[tuple[IndexingMap, ...]]:
    """Output ``output_index`` -> each operand ``i`` < count: identity-shaped maps (so they are
    their own input-to-output maps)."""
    count = (len(instr.operands) - 1) // 2
    dims = instr.shape.leaf(output_index).dims
    identity = IndexingMap.identity(dims)
    _, landed_map, starts = _landing(instr, dims)
    if starts.never_valid:  # no update ever lands: the output is its own operand
        return [(identity,) if i == output_index else () for i in range(count)]
    read_old = combiner_reads_old(instr, count)[output_index]
    if read_old is None:
        reason = (
            f"scatter: which operands output {output_index} reads where updates land depends on how many "
            f"updates land there (the combiner passes old values between its outputs)"
        )
        return [(IndexingMap.undefined(reason),)] * count
    out: list[tuple[IndexingMap, ...]] = []
    for i in range(count):
        if i != output_index:
            out.append((landed_map,) if i in read_old else ())
        elif i in read_old:
            out.append((identity,))
        else:
            out.append(_not_landed(instr, dims, starts))
    return out


def _not_landed(instr: Instruction, dims: Sequence[int], starts: Starts) -> tuple[IndexingMap, ...]:
    import numpy as np

    what = f"scatter %{instr.name}: where no update overwrites operand elements"
    from .windows import WindowPlacement

    placement = WindowPlacement.of_scatter(instr)
    update_dims, batch_dims = placement.windowed_dims, placement.batch_dims
    windows = int(np.prod([update_dims[u] for u in batch_dims], dtype=np.int64))
    if windows == 0 or 0 in update_dims:
        return (IndexingMap.identity(dims),)  # no update at all: nothing is overwritten
    if not starts.runtime:
        return _static_not_landed(dims, _updates_to_output(instr, dims)[0], what)
    from_literal = _constant_indices_not_landed(instr, dims, what)
    if from_literal is not None:
        return from_literal
    if all(update_dims[u] == 1 for u in batch_dims):
        window_starts = placement.starts([const(0)] * len(batch_dims), Starts())
        return _one_window_not_landed(placement, dims, window_starts)
    return (
        IndexingMap.undefined(
            f"{what}: the combiner overwrites the old value, and which elements the {windows} update windows "
            f"cover depends on every runtime index vector at once (not expressible as maps)"
        ),
    )


def _updates_to_output(instr: Instruction, dims: Sequence[int]) -> tuple[IndexingMap, Starts]:
    """Update element -> the output element it lands on (its window's start plus its offset)."""
    from .windows import WindowPlacement

    placement = WindowPlacement.of_scatter(instr)
    starts = Starts()
    results = placement.windowed_to_operand(starts)
    return IndexingMap([full_interval(n) for n in placement.windowed_dims], (), starts.runtime, results), starts


# ---- the rules ----------------------------------------------------------------------------


@output_to_input_rule("scatter", reads=INDEXED_READS)
def scatter_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    count = (len(instr.operands) - 1) // 2
    dims = instr.shape.leaf(output_index).dims
    domain = [full_interval(n) for n in dims]
    indices = instr.operands[count]
    indices_map = IndexingMap(
        domain, [full_interval(n) for n in indices.shape.dims], (), [range_var(k) for k in range(indices.shape.rank)]
    )
    update_map, _, _ = _landing(instr, dims)
    operands = [OperandMaps(i, maps) for i, maps in enumerate(_operand_maps(instr, output_index))]
    updates = () if update_map is None else (update_map,)
    return (
        operands
        + [OperandMaps(count, (indices_map,))]
        + [OperandMaps(k, updates) for k in range(count + 1, 2 * count + 1)]
    )


@input_to_output_rule("scatter", reads=INDEXED_READS)
def scatter_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    count = (len(instr.operands) - 1) // 2
    dims = instr.operands[0].shape.dims
    per_output = instr.shape.num_outputs
    if operand_index == count:
        return [(_indices_to_everything(instr.operands[count].shape.dims, dims),)] * per_output
    if operand_index < count:
        return [_operand_maps(instr, j)[operand_index] for j in range(per_output)]
    updates, starts = _updates_to_output(instr, dims)
    return [() if starts.never_valid else (updates,)] * per_output


def _indices_to_everything(indices_dims: Sequence[int], dims: Sequence[int]) -> IndexingMap:
    """Every index vector may redirect an update to any output element."""
    return IndexingMap(
        [full_interval(n) for n in indices_dims],
        [full_interval(n) for n in dims],
        (),
        [range_var(k) for k in range(len(dims))],
    )
