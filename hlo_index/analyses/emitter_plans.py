"""The emitter XLA:GPU picks for a fusion and its thread maps (``ThreadPlan``), one builder per
emitter. Choice order as in ``HloFusionAnalysis::GetEmitterFusionKind``: custom / Triton /
cuDNN fusions (no thread map here), packed sub-byte types (loop), reduction, transpose, input
slices, scatter, concatenate, then loop (in-place dynamic-update-slice when the root updates a
parameter's buffer, as ``fusions.cc`` decides)."""

from __future__ import annotations

from typing import cast

from ..affine import IndexingMap, Interval, const, dim, range_var
from ..context import current, register_table
from ..hlo.model import Instruction, Shape
from .emitters import (
    BX,
    TX,
    Seed,
    ThreadPlan,
    _thread_domain,
    ceil_div,
    default_thread_map,
    delinearize,
    find_hero,
    fusion_roots,
    loop_unroll_factor,
    reduction_dimensions,
    reduction_is_faster_unnested,
    round_up,
    smallest_bits,
    tile_map,
    transpose_description,
    vector_size,
    with_bounds,
)
from .gpu_devices import GpuDevice

_PLANS = register_table("analyses.emitter_plans.plans")  # (id(fusion), id(device)) -> (fusion, device, plan)
# id(fusion) -> (fusion, [(plan, the device answers it was built from)]): devices that answer alike share a plan
_BUILT = register_table("analyses.emitter_plans.built")

_UNMODELLED_KINDS = {
    "__triton": "Triton",
    "__triton_gemm": "Triton GEMM",
    "__triton_softmax": "Triton softmax",
    "__triton_nested_gemm_fusion": "Triton",
    "__cudnn$fusion": "cuDNN",
    "__custom_fusion": "custom",
}

_KINDS_LONGEST_FIRST = sorted(_UNMODELLED_KINDS, key=len, reverse=True)


def backend_kind(fusion: Instruction) -> str:
    config = str(fusion.attrs.get("backend_config", ""))
    if "__" not in config:  # every unmodelled kind is named "__..."
        return ""
    compact = config.replace(" ", "")
    for key in _KINDS_LONGEST_FIRST:
        if f'"kind":"{key}"' in compact or f'kind: "{key}"' in config:
            return _UNMODELLED_KINDS[key]
    return ""


def plan_for(fusion: Instruction, device: GpuDevice) -> ThreadPlan:
    """The thread plan of XLA's emitter for ``fusion`` on ``device``, memoised per analysis
    context (the coalescing figures and the cost model both ask; plans are read, never changed).
    Two devices share one plan object when the builder's questions get the same answers on both
    (the devices differ in figures the fusion's emitter never reads)."""
    table = current().tables[_PLANS]
    # by identity: a device's hash rebuilds its fields' tuples on every call (an equal device
    # of another object gets the same plan from ``_plan_sharing_answers``)
    key = (id(fusion), id(device))
    hit = table.get(key)
    if hit is None or hit[0] is not fusion or hit[1] is not device:
        hit = table[key] = (fusion, device, _plan_sharing_answers(fusion, device))  # keeps both alive
    return hit[2]


def _plan_sharing_answers(fusion: Instruction, device: GpuDevice) -> ThreadPlan:
    built = current().tables[_BUILT]
    entry = built.get(id(fusion))
    if entry is None or entry[0] is not fusion:
        entry = built[id(fusion)] = (fusion, [])
    for plan, answers in entry[1]:
        if _answers_hold(device, answers):
            return plan
    recorded = _RecordedDevice(device)
    plan = _plan_for(fusion, cast(GpuDevice, recorded))  # it reads ``device`` through ``recorded``
    entry[1].append((plan, tuple(recorded.answers)))
    return plan


class _RecordedDevice:
    """``device`` as a plan's builder reads it, every answer recorded: each figure read, as
    (name, None, value), and each question asked (a method called), as (name, arguments, answer)."""

    __slots__ = ("_device", "answers")

    def __init__(self, device: GpuDevice) -> None:
        self._device = device
        self.answers: list[tuple] = []

    def __getattr__(self, name: str):
        value = getattr(self._device, name)
        if not callable(value):
            self.answers.append((name, None, value))
            return value

        def asked(*args):
            answer = value(*args)
            self.answers.append((name, args, answer))
            return answer

        return asked


def _answers_hold(device: GpuDevice, answers: tuple) -> bool:
    """Whether ``device`` gives each of ``answers`` (``_RecordedDevice``'s records)."""
    for name, args, answer in answers:
        value = getattr(device, name)
        if (value if args is None else value(*args)) != answer:
            return False
    return True


def _plan_for(fusion: Instruction, device: GpuDevice) -> ThreadPlan:
    comp = fusion.fused_computation
    if comp is None or comp.root is None:
        return ThreadPlan("none", unmodelled="not a fusion with a fused computation")
    backend = backend_kind(fusion)
    if backend:
        return ThreadPlan(
            backend.lower(),
            unmodelled=f"a {backend} fusion: XLA tiles it with its "
            f"own emitter, no thread map of the classic "
            f"emitters applies",
        )
    roots = fusion_roots(comp)
    heroes = [find_hero(r) for r, _ in roots]
    in_bits = smallest_bits(p.shape for p in comp.parameters.values())
    out_bits = smallest_bits([fusion.shape])
    if in_bits < 8 or out_bits < 8:
        plan = _loop(fusion, comp, roots, device)
        plan.notes.append("sub-byte types: only the loop emitter packs them")
        return plan
    for hero in heroes:
        if hero.opcode == "reduce":
            rd = reduction_dimensions(hero)
            if rd is not None and reduction_is_faster_unnested(rd[0], rd[1], device.warp_size):
                return _reduction(fusion, comp, roots, heroes, hero, rd, in_bits, device)
    for hero in heroes:
        desc = transpose_description(hero)
        if desc is not None:
            return _transpose(comp, roots, heroes, hero, desc, device)
    if (
        len(roots) > 1
        and all(r.opcode == "slice" for r, _ in roots)
        and len({r.operands[0].shape.dims for r, _ in roots}) == 1
        and all(all(sd.stride == 1 for sd in r.attrs.get("slice", ())) for r, _ in roots)
    ):
        return _input_slices(comp, roots, device)
    root = comp.root
    if len(roots) == 1 and root.opcode == "scatter":
        return _scatter(comp, root, device)
    if (
        len(roots) == 1
        and heroes[0].opcode == "concatenate"
        and not root.shape.is_tuple
        and len(heroes[0].operands) <= 4
    ):
        return _concatenate(comp, heroes[0], device)
    dus = _in_place_dus(root)
    if dus is not None:
        return _dynamic_update_slice(comp, dus, device)
    return _loop(fusion, comp, roots, device)


# ---- loop / input slices / concatenate / DUS / scatter -------------------------------------------


def _loop(fusion, comp, roots, device) -> ThreadPlan:
    element = fusion.shape.leaf(0) if not fusion.shape.is_tuple else _first_leaf(fusion.shape)
    unroll = loop_unroll_factor(comp, element.num_elements, device)
    plan = ThreadPlan("loop", loops=("unroll",), innermost=0)
    for k, (instr, elem) in enumerate(roots):
        shape = _output_shape(fusion, k, instr, elem)
        m, tpb, blocks = default_thread_map(shape, unroll, device)
        plan.seeds.append(Seed(instr, elem, (m,)))
        plan.threads_per_block, plan.blocks = tpb, blocks
    plan.notes.append(f"unroll factor {unroll}")
    return plan


def _first_leaf(shape: Shape) -> Shape:
    while shape.tuple_shapes is not None:
        shape = shape.tuple_shapes[0]
    return shape


def _output_shape(fusion, k, instr, elem) -> Shape:
    try:
        leaf = fusion.shape.leaf(k)
        if not leaf.is_tuple and leaf.dims == instr.shape.leaf(elem).dims:
            return leaf
    except IndexError:
        pass
    return instr.shape.leaf(elem)


def _threads_walk(comp, shape: Shape, device, emitter: str, note: str) -> tuple[ThreadPlan, IndexingMap]:
    """The plan of an emitter whose threads walk ``shape`` as the loop emitter does (unrolled, the
    default thread map), and that thread map."""
    unroll = loop_unroll_factor(comp, shape.num_elements, device)
    m, tpb, blocks = default_thread_map(shape, unroll, device)
    return ThreadPlan(emitter, tpb, blocks, ("unroll",), 0, notes=[f"unroll factor {unroll}", note]), m


def _input_slices(comp, roots, device) -> ThreadPlan:
    plan, m = _threads_walk(
        comp, roots[0][0].operands[0].shape, device, "input slices", "threads walk the sliced input"
    )
    plan.seeds = [Seed(r.operands[0], 0, (m,)) for r, _ in roots]
    plan.stop = tuple(r for r, _ in roots)
    return plan


def _concatenate(comp, concat: Instruction, device) -> ThreadPlan:
    largest = max((o.shape for o in concat.operands), key=lambda s: s.num_elements)
    plan, m = _threads_walk(
        comp, largest, device, "concatenate", "each thread reads the same position of every operand"
    )
    for operand in concat.operands:
        bounded = IndexingMap(
            m.dims, [], [], m.results, list(m.constraints) + with_bounds(m.results, operand.shape.dims)
        )
        plan.seeds.append(Seed(operand, 0, (bounded,)))
    plan.stop = (concat,)
    return plan


def _through_bitcasts(instr: Instruction) -> Instruction:
    while instr.opcode == "bitcast" and instr.operands:
        instr = instr.operands[0]
    return instr


def _in_place_dus(root: Instruction) -> Instruction | None:
    dus = _through_bitcasts(root)
    if dus.opcode != "dynamic-update-slice" or not dus.operands:
        return None
    buffer = _through_bitcasts(dus.operands[0])
    return dus if buffer.opcode == "parameter" else None


def _dynamic_update_slice(comp, dus: Instruction, device) -> ThreadPlan:
    plan, m = _threads_walk(
        comp,
        dus.operands[1].shape,
        device,
        "in-place dynamic-update-slice",
        "threads walk the update; the updated buffer is written in place, never read",
    )
    plan.seeds = [Seed(dus.operands[1], 0, (m,))]
    plan.stop = (dus,)
    return plan


def _scatter(comp, scatter: Instruction, device) -> ThreadPlan:
    n = len(scatter.operands) // 2
    updates = scatter.operands[n + 1].shape
    plan, m = _threads_walk(comp, updates, device, "scatter", "threads walk the updates")
    for j in range(n):
        plan.seeds.append(Seed(scatter.operands[n + 1 + j], 0, (m,)))
    indices = scatter.operands[n]
    plan.seeds.append(Seed(indices, 0, (_scatter_indices_map(scatter, m, indices.shape),)))
    written = _scatter_written(scatter, m, n)
    for j in range(n):
        plan.seeds.append(Seed(scatter.operands[j], 0, (written,)))
    plan.stop = (scatter,)
    return plan


def _scatter_indices_map(scatter, m: IndexingMap, indices: Shape) -> IndexingMap:
    """Thread -> scatter indices: the update's scatter dims pick the index row, a range
    variable runs along the index vector (XLA's map, generalised to any index_vector_dim)."""
    window = set(scatter.attrs.get("update_window_dims", ()))
    vector_dim = scatter.attrs.get("index_vector_dim", indices.rank)
    scatter_dims = [d for d in range(len(m.results)) if d not in window]
    coords, k = [], 0
    for d in range(indices.rank):
        if d == vector_dim:
            coords.append(range_var(0))
        else:
            coords.append(m.results[scatter_dims[k]] if k < len(scatter_dims) else const(0))
            k += 1
    ranges = [Interval(0, indices.dims[vector_dim] - 1)] if vector_dim < indices.rank else []
    if not ranges:
        coords = list(coords)
    return IndexingMap(m.dims, ranges, [], coords, m.constraints)


def _scatter_written(scatter, m: IndexingMap, n: int) -> IndexingMap:
    """Thread -> the operand element its update combines with (read-modify-write), from the
    op's update -> output map; the start is a runtime value."""
    from ..ops import input_to_output

    try:
        maps = input_to_output(scatter, n + 1)[0]
    except Exception as exc:  # noqa: BLE001
        return IndexingMap.undefined(f"scatter: no update -> operand map ({exc})")
    if len(maps) != 1 or maps[0].is_undefined:
        return IndexingMap.undefined("scatter: the written position is not one map of the update")
    return maps[0].compose(m)


# ---- transpose -----------------------------------------------------------------------------


def _transpose(comp, roots, heroes, hero, desc, device) -> ThreadPlan:
    a, b, o_lane, o_row = desc
    source = hero.operands[0].shape
    read, tpb, blocks = tile_map(source, a, b, device)
    write, _, _ = tile_map(hero.shape, o_lane, o_row, device)
    plan = ThreadPlan(
        "transpose",
        tpb,
        blocks,
        ("row pass",),
        0,
        notes=[f"{device.transpose_tile}x{device.transpose_tile} tiles through shared memory, read in input order"],
    )
    plan.seeds.append(Seed(hero.operands[0], 0, (read,)))
    for (instr, elem), h in zip(roots, heroes):
        dims = instr.shape.leaf(elem).dims
        if h is hero and dims == hero.shape.dims and instr is not hero:
            plan.seeds.append(Seed(instr, elem, (write,)))
        elif h is not hero and dims == source.dims:
            plan.seeds.append(Seed(instr, elem, (read,)))
    plan.stop = tuple(h for h in heroes if transpose_description(h) is not None)
    return plan


# ---- reductions ----------------------------------------------------------------------------


def _reduction(fusion, comp, roots, heroes, hero, rd, in_bits, device) -> ThreadPlan:
    is_row, (x0, x1, x2) = rd
    complex_reduce = any(o.shape.element_type.startswith("c") for o in hero.operands if not o.shape.is_tuple)
    out_bits = smallest_bits([fusion.shape])
    if is_row:
        built = _multi_row(x0, x1, x2, in_bits, out_bits, device) or _row(x0, x1, x2, in_bits, complex_reduce, device)
    elif device.warp_size % x2 == 0:
        built = _small_column(x0, x1, x2, in_bits, complex_reduce, device)
    else:
        built = _column(x0, x1, x2, in_bits, complex_reduce, device)
    name, linear, out_linear, writer, tpb, blocks, loops, notes = built
    plan = ThreadPlan(name, tpb, blocks, tuple(n for n, _ in loops), len(loops) - 1, notes=notes)
    domain = _thread_domain(tpb, blocks, [s for _, s in loops])
    reduce_heroes = [h for h in heroes if h.opcode == "reduce" and reduction_dimensions(h) == rd]
    n_in = x0 * x1 * x2
    for h in dict.fromkeys(reduce_heroes):
        for operand in h.operands[: len(h.operands) // 2]:
            plan.seeds.append(Seed(operand, 0, (_linear_map(domain, linear, operand.shape, n_in),)))
    for (instr, elem), h in zip(roots, heroes):
        shape = instr.shape.leaf(elem)
        if h in reduce_heroes and instr is not h:
            out_shape = h.shape.leaf(0)
            if shape.dims == out_shape.dims:
                m = _linear_map(domain, out_linear, shape, out_shape.num_elements, writer)
                plan.seeds.append(Seed(instr, elem, (m,)))
        elif h not in reduce_heroes and shape.num_elements == n_in:
            plan.seeds.append(Seed(instr, elem, (_linear_map(domain, linear, shape, n_in),)))
    plan.stop = tuple(dict.fromkeys(reduce_heroes))
    return plan


def _linear_map(domain, linear, shape: Shape, n: int, extra=()) -> IndexingMap:
    bounds = []
    if isinstance(linear, _Bounded):
        linear, bounds = linear.linear, linear.bounds
    coords = delinearize(linear, shape)
    return IndexingMap(domain, [], [], coords, [(linear, Interval(0, n - 1))] + list(bounds) + list(extra))


def _loop_dim(k: int):
    return dim(2 + k)


def _multi_row(x0, x1, x2, in_bits, out_bits, device):
    if x2 & (x2 - 1):
        return None
    small, large = min(in_bits, out_bits), max(in_bits, out_bits)
    v = min(x2, 64 // small)
    if large >= 32:
        v = min(128 // large, v)
    warp = device.warp_size
    if x2 > warp * v:
        return None

    def threads(vec):
        reduced = x2 // vec
        kept = (
            x1
            if x1 * reduced <= device.reduction_threads_per_block_target
            else device.reduction_threads_per_block_target // reduced
        )
        return kept, reduced

    while v > 1 and device.has_idle_cores(ceil_div(x1, threads(v)[0])):
        v //= 2
    if x2 > warp * v:
        return None
    kept, reduced = threads(v)
    blocks = ceil_div(x1, kept)
    tx, bx = dim(TX), dim(BX)
    row = bx * kept + tx.floordiv(reduced)
    linear = (_loop_dim(0) * x1 + row) * x2 + tx.mod(reduced) * v + _loop_dim(1)
    writer = [(tx.mod(reduced), Interval(0, 0))]
    linear = _Bounded(linear, [(row, Interval(0, x1 - 1))])
    return (
        "multi-row reduction",
        linear,
        row,
        writer,
        kept * reduced,
        blocks,
        [("major reduced", x0), ("vector", v)],
        [f"{kept} rows x {reduced} threads per block", f"vector size {v}"],
    )


def _row(x0, x1, x2, in_bits, complex_reduce, device):
    per_thread = 32
    reduced = min(device.row_reduction_max_threads_x, round_up(ceil_div(x2, per_thread), device.warp_size))
    kept = 1
    target = device.reduction_threads_per_block_target
    if reduced * 2 <= target:
        kept = x1 if x1 * reduced <= target else target // reduced
    v = vector_size(x2, reduced, in_bits, complex_reduce)
    columns = x2 // v
    tile = min(per_thread // v, ceil_div(columns, reduced))
    nb0, nb1 = ceil_div(x1, kept), ceil_div(columns, tile * reduced)
    tx, bx = dim(TX), dim(BX)
    b0, b1 = (bx.floordiv(nb1), bx.mod(nb1)) if nb1 > 1 else (bx, const(0))
    row = b0 * kept + tx.floordiv(reduced)
    column = b1 * (tile * reduced) + _loop_dim(1) * reduced + tx.mod(reduced)
    linear = (_loop_dim(0) * x1 + row) * x2 + column * v + _loop_dim(2)
    writer = [(tx.mod(reduced), Interval(0, 0))]
    extra_bound = [(column, Interval(0, columns - 1)), (row, Interval(0, x1 - 1))]
    return (
        "row reduction",
        _Bounded(linear, extra_bound),
        row,
        writer,
        kept * reduced,
        nb0 * nb1,
        [("major reduced", x0), ("minor reduced", tile), ("vector", v)],
        [f"{kept} rows x {reduced} threads per block", f"vector size {v}"],
    )


def _column(x0, x1, x2, in_bits, complex_reduce, device):
    t = device.warp_size
    v = vector_size(x2, t, in_bits, complex_reduce)
    per_thread = ceil_div(x1, t)
    nb1 = ceil_div(x2, t * v)
    tx, bx = dim(TX), dim(BX)
    b0, b1 = (bx.floordiv(nb1), bx.mod(nb1)) if nb1 > 1 else (bx, const(0))
    reduced_index = tx.floordiv(t) + _loop_dim(0) * t
    kept_minor = (b1 * t + tx.mod(t)) * v + _loop_dim(1)
    linear = (b0 * x1 + reduced_index) * x2 + kept_minor
    out_linear = b0 * x2 + (b1 * t + tx.floordiv(t)) * v
    writer = [(tx.mod(t), Interval(0, 0))]
    bounds = [(reduced_index, Interval(0, x1 - 1)), (kept_minor, Interval(0, x2 - 1))]
    return (
        "column reduction",
        _Bounded(linear, bounds),
        out_linear,
        writer,
        t * t,
        x0 * nb1,
        [("reduced", per_thread), ("vector", v)],
        [f"{t}x{t} threads per block", f"vector size {v}"],
    )


def _small_column(x0, x1, x2, in_bits, complex_reduce, device):
    v = vector_size(x1 * x2, device.warp_size, in_bits, complex_reduce)
    threads = 128
    shared_rows = v * threads // x2
    while shared_rows > device.warp_size and v > 1:
        v //= 2
        shared_rows //= 2
    if shared_rows > device.warp_size:
        threads //= shared_rows // device.warp_size
        shared_rows = device.warp_size
    loop = ceil_div(x1 * x2, v * threads)
    tx, bx = dim(TX), dim(BX)
    inner = tx * v + _loop_dim(1) + _loop_dim(0) * (v * threads)
    linear = bx * (x1 * x2) + inner
    out_linear = bx * x2 + tx.floordiv(max(shared_rows, 1))
    writer = [(tx.mod(max(shared_rows, 1)), Interval(0, 0))]
    return (
        "small column reduction",
        _Bounded(linear, [(inner, Interval(0, x1 * x2 - 1))]),
        out_linear,
        writer,
        threads,
        x0,
        [("loop", loop), ("vector", v)],
        [f"{threads} threads per block", f"vector size {v}"],
    )


class _Bounded:
    """A linear index with extra bound constraints (the emitter masks those threads)."""

    def __init__(self, linear, bounds):
        self.linear, self.bounds = linear, bounds
