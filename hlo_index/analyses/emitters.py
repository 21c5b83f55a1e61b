"""Which XLA:GPU emitter a fusion gets, and the thread -> element maps it reads with.

Modelled on ``xla/service/gpu/hlo_fusion_analysis.cc`` (emitter choice),
``xla/backends/gpu/codegen/emitters/{loop,reduction,transpose,concatenate,scatter,
in_place_dynamic_update_slice}.cc`` (thread maps) and ``gpu_fusible.cc`` /
``launch_dimensions.cc`` (unroll factor, block size). Every thread map is an ``IndexingMap``
whose dimensions are ``(thread_x, block_x, loop_0, ..., loop_k)``: the emitter's loops are
dimensions (not range variables) so composing through the fusion never reorders or drops them;
``innermost`` names the loop that is vectorised / unrolled innermost.

A map lands in the index space of the value it seeds (``Seed.instruction``): the fusion root
(loop emitter), the operands of a reduce / transpose hero, the update of an in-place
dynamic-update-slice. ``gpu_coalescing`` walks the seeds back to the fusion's parameters.
Where XLA itself has no thread map (Triton, cuDNN, custom fusions) ``ThreadPlan.unmodelled``
says so and the caller falls back to XLA's coalescing heuristic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from ..affine import IndexingMap, Interval, const, dim
from ..context import current, register_table
from ..hlo.model import Instruction, Shape
from .gpu_devices import GpuDevice
from .physical_order import minor_nontrivial, physical_order

# Per analysis context: (id(shape), unroll, threads per block, extra loops) -> (shape, default_thread_map's answer)
_DEFAULT_MAPS = register_table("analyses.emitters.default_thread_maps")

TX, BX = 0, 1  # thread map dims: thread_x, block_x, then the loops
_ELEMENTWISE_UNARY_PASS = {
    "bitcast",
    "reshape",
    "convert",
    "copy",
    "negate",
    "abs",
    "exponential",
    "log",
    "sqrt",
    "rsqrt",
    "tanh",
    "logistic",
    "sign",
    "not",
    "floor",
    "ceil",
    "round-nearest-even",
    "round-nearest-afz",
    "cosine",
    "sine",
    "real",
    "imag",
    "is-finite",
    "popcnt",
    "count-leading-zeros",
    "cbrt",
    "exponential-minus-one",
    "log-plus-one",
    "bitcast-convert",
    "reduce-precision",
}
_PREVENTS_VECTORIZATION = {"reduce-window", "sort", "dot", "sine", "cosine", "tan", "power", "atan2"}


@dataclass(frozen=True)
class Seed:
    """Thread maps into one value of the fused computation (``element``: its tuple element)."""

    instruction: Instruction
    element: int
    maps: tuple[IndexingMap, ...]


@dataclass
class ThreadPlan:
    """How XLA's emitter for a fusion assigns its output elements to threads and blocks."""

    emitter: str  # loop | concatenate | transpose | row reduction | ...
    threads_per_block: int = 0
    blocks: int = 0
    loops: tuple[str, ...] = ()  # names of the loop dims, outermost first
    innermost: int | None = None  # index into loops of the vectorised / unrolled loop
    seeds: list[Seed] = field(default_factory=list)
    stop: tuple[Instruction, ...] = ()  # heroes: the walk from the root does not cross them
    notes: list[str] = field(default_factory=list)
    unmodelled: str = ""  # why no thread map (Triton, custom fusion...)

    def describe(self) -> str:
        extra = f" ({'; '.join(self.notes)})" if self.notes else ""
        return f"{self.emitter} emitter, {self.threads_per_block} threads/block{extra}"


# ---- small helpers ------------------------------------------------------------------------


def delinearize(linear, shape: Shape) -> list:
    """Logical coordinates of the element at ``linear`` in ``shape``'s dense physical order."""
    coords = [const(0)] * shape.rank
    _split_index(linear, physical_order(shape), shape, coords)
    return coords


def _split_index(linear, dims, shape: Shape, coords: list) -> None:
    """Write into ``coords`` the mixed-radix digits of ``linear`` over ``dims`` (most major first);
    the most major digit is not reduced, so an out-of-range index stays visible to constraints."""
    stride = 1
    for position in range(len(dims) - 1, -1, -1):
        d = dims[position]
        size = shape.dims[d]
        if size > 1:
            value = linear.floordiv(stride) if stride > 1 else linear
            coords[d] = value if position == 0 else value.mod(size)
        stride *= size


def _thread_domain(tpb: int, blocks: int, loop_sizes) -> list[Interval]:
    return [Interval(0, tpb - 1), Interval(0, max(blocks, 1) - 1)] + [Interval(0, max(n, 1) - 1) for n in loop_sizes]


def _bits(shape: Shape) -> int:
    return 8 if shape.element_type == "pred" else shape.element_bits


def _leaves(shape: Shape) -> list[Shape]:
    return list(shape.tuple_shapes) if shape.tuple_shapes is not None else [shape]


def fusion_roots(comp) -> list[tuple[Instruction, int]]:
    """(instruction, tuple element) per fusion output: a root tuple's operands, else the root."""
    root = comp.root
    if root.opcode == "tuple":
        return [(op, 0) for op in root.operands]
    return [(root, k) for k in range(root.shape.num_outputs)]


def find_hero(root: Instruction) -> Instruction:
    """The non-trivial op behind a root: through bitcasts, reshapes and unary elementwise ops
    (XLA's ``FindNonTrivialHero``, simplified: any single-user chain of such ops)."""
    instr = root
    for _ in range(64):
        if instr.opcode in ("reduce", "transpose", "concatenate", "scatter"):
            return instr
        if instr.opcode in _ELEMENTWISE_UNARY_PASS and len(instr.operands) == 1:
            instr = instr.operands[0]
            continue
        break
    return root


def smallest_bits(shapes) -> int:
    bits = [_bits(s) for shape in shapes for s in _leaves(shape) if _bits(s)]
    return min(bits) if bits else 32


# ---- reductions ----------------------------------------------------------------------------


def reduction_dimensions(reduce: Instruction) -> tuple[bool, tuple[int, int, int]] | None:
    """XLA's ``GetReductionKindAndContiguousComponents``: (is_row, [x0, x1, x2]) in physical
    order, or None when neither the kept nor the reduced dims are consecutive in memory."""
    operand = reduce.operands[0].shape
    reduced = set(reduce.attrs.get("dimensions", ()))
    runs: list[list] = []  # [is_reduced, product]
    for d in physical_order(operand):
        if operand.dims[d] == 1:
            continue
        r = d in reduced
        if runs and runs[-1][0] == r:
            runs[-1][1] *= operand.dims[d]
        else:
            runs.append([r, operand.dims[d]])
    if not runs:
        return True, (1, 1, 1)
    if len(runs) > 3 or (len(runs) == 3 and runs[0][0] != runs[2][0]):
        return None
    if runs[-1][0]:  # row: [reduced, kept, reduced]
        sizes = [1, 1, runs[-1][1]]
        if len(runs) >= 2:
            sizes[1] = runs[-2][1]
        if len(runs) == 3:
            sizes[0] = runs[0][1]
        return True, tuple(sizes)
    sizes = [1, 1, runs[-1][1]]  # column: [kept, reduced, kept]
    if len(runs) >= 2:
        sizes[1] = runs[-2][1]
    if len(runs) == 3:
        sizes[0] = runs[0][1]
    return False, tuple(sizes)


def reduction_is_faster_unnested(is_row: bool, dims, warp: int) -> bool:
    """XLA's ``IsUnnestedReductionFasterThanElemental``. A row of no elements (a reduce of an
    empty array, which XLA's simplifier removes first) is left elemental: XLA's test divides by it."""
    if is_row:
        return dims[2] >= warp or (dims[2] > 0 and warp % dims[2] == 0)
    major, minor = dims[1], dims[2]
    elemental = (
        major < warp
        or (major < 2 * warp and minor < warp)
        or (major < 4 * warp and minor < 8)
        or (major < 8 * warp and minor < 3)
    )
    return not elemental


def vector_size(minor_dim: int, num_threads: int, input_bits: int, complex_reduce: bool) -> int:
    """XLA's ``GetVectorSizeForMlir``."""
    if minor_dim % 2 or num_threads * 2 > minor_dim or complex_reduce:
        return 1
    if input_bits >= 32:
        return 2
    if input_bits >= 16:
        return 4 if minor_dim % 4 == 0 and num_threads * 4 <= minor_dim else 2
    for v in (8, 4):
        if minor_dim % v == 0 and num_threads * v <= minor_dim:
            return v
    return 2


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    return ceil_div(a, b) * b


def may_prevent_vectorization(comp) -> bool:
    """XLA's ``MayPreventVectorization`` for loop fusions."""
    for instr in comp.instructions:
        if instr.opcode in _PREVENTS_VECTORIZATION:
            return True
        if instr.opcode == "concatenate" and len(instr.operands) > 10:
            return True
        if instr.opcode == "reduce" and instr.shape.is_tuple:
            return True
    return False


def loop_unroll_factor(comp, num_elements: int, device: GpuDevice) -> int:
    """XLA's loop-fusion unroll rule (``ComputeLoopFusionConfig``): unroll only when the output
    has at least as many elements as the GPU has threads, nothing in the fusion prevents
    vectorisation, and then by the largest of 4, 2 dividing the element count."""
    if not device.is_filled_by(num_elements) or may_prevent_vectorization(comp):
        return 1
    for u in (device.max_unroll_factor, 2):
        if u <= device.max_unroll_factor and num_elements % u == 0:
            return u
    return 1


# ---- the default (loop) thread map -----------------------------------------------------------


def default_thread_map(shape: Shape, unroll: int, device: GpuDevice, *, extra_loops=()):
    """``(thread_x, block_x, unroll) -> index of shape``: thread t of block b handles elements
    ``(b * threads + t) * unroll + u``, numbered in the shape's physical order."""
    n = max(shape.num_elements, 1)
    per_thread = ceil_div(n, unroll)
    tpb = min(device.loop_threads_per_block, per_thread)
    # the fusions of one output shape (and unroll) ask for the same map: built once per context
    table = current().tables[_DEFAULT_MAPS]
    key = (id(shape), unroll, tpb, tuple(extra_loops))
    hit = table.get(key)
    if hit is not None and hit[0] is shape:
        return hit[1]
    blocks = ceil_div(per_thread, tpb)
    u = dim(2 + len(extra_loops))
    linear = (dim(BX) * tpb + dim(TX)) * unroll + u if unroll > 1 else dim(BX) * tpb + dim(TX)
    results = delinearize(linear, shape)
    domain = _thread_domain(tpb, blocks, list(extra_loops) + [unroll])
    constraints = [(linear, Interval(0, n - 1))] if tpb * blocks * unroll != n else []
    built = IndexingMap(domain, [], [], results, constraints), tpb, blocks
    table[key] = (shape, built)  # keeps ``shape`` alive: its id stays its own
    return built


def with_bounds(results, dims_sizes, extra=()) -> list:
    """Constraints keeping each coordinate inside its dim (dropped later when always true)."""
    return [(e, Interval(0, n - 1)) for e, n in zip(results, dims_sizes)] + list(extra)


def tile_map(shape: Shape, lane_dim: int, row_dim: int, device: GpuDevice):
    """XLA's tiled transpose read: 32 x 32 tiles of ``shape``; lanes run along ``lane_dim``
    (contiguous in memory), the 128 threads of a block cover 4 rows of ``row_dim`` per pass,
    8 passes (loop 0). Blocks enumerate tiles, the other dims major to minor."""
    t, rows = device.transpose_tile, device.transpose_rows_per_pass
    passes = t // rows
    tpb = t * rows
    na, nb = ceil_div(shape.dims[lane_dim], t), ceil_div(shape.dims[row_dim], t)
    others = [d for d in physical_order(shape) if d not in (lane_dim, row_dim)]
    rest = prod(shape.dims[d] for d in others)
    blocks = rest * na * nb
    bx = dim(BX)
    coords = [const(0)] * shape.rank
    coords[lane_dim] = bx.mod(na) * t + dim(TX).mod(t) if na > 1 else dim(TX).mod(t)
    tile_b = bx.floordiv(na).mod(nb) if nb > 1 else const(0)
    coords[row_dim] = tile_b * t + dim(TX).floordiv(t) + dim(2) * rows
    _split_index(bx.floordiv(na * nb), others, shape, coords)
    domain = _thread_domain(tpb, blocks, [passes])
    constraints = [
        (coords[lane_dim], Interval(0, shape.dims[lane_dim] - 1)),
        (coords[row_dim], Interval(0, shape.dims[row_dim] - 1)),
    ]
    return IndexingMap(domain, [], [], coords, constraints), tpb, blocks


def layout_permutation(instr: Instruction) -> tuple[int, ...] | None:
    """The logical permutation of a transpose, or the identity of a (possibly layout-changing)
    copy, between two arrays; None for anything else."""
    if instr.opcode not in ("transpose", "copy") or not instr.operands:
        return None
    src, out = instr.operands[0].shape, instr.shape
    if src.is_tuple or out.is_tuple:
        return None
    perm = tuple(instr.attrs.get("dimensions", ())) if instr.opcode == "transpose" else tuple(range(out.rank))
    return perm if len(perm) == out.rank else None


def transpose_description(hero: Instruction):
    """(input lane dim, input row dim, output lane dim, output row dim) when ``hero`` moves the
    input's minor dimension and both dims are big enough for XLA's tiled transpose emitter."""
    perm = layout_permutation(hero)
    if perm is None:
        return None
    src, out = hero.operands[0].shape, hero.shape
    a, o_minor = minor_nontrivial(src), minor_nontrivial(out)
    if a is None or o_minor is None:
        return None
    b = perm[o_minor]
    if a == b:
        return None
    o_row = perm.index(a)
    n_a, n_b = src.dims[a], src.dims[b]
    big = (n_a >= 16 and n_b >= 16) or (n_a >= 8 and n_b >= 8 and n_a * n_b >= 64 * 128)
    return (a, b, o_minor, o_row) if big else None


class ComputationAsFusion:
    """A fused computation analysed on its own, as XLA's emitter tests do: its parameters are
    the fusion's operands, its root's shape the fusion's output."""

    opcode = "fusion"

    def __init__(self, comp) -> None:
        self.fused_computation = comp
        self.name = comp.name
        self.attrs: dict = {}
        self.shape = comp.root.shape
        self.operands = tuple(comp.parameters[k] for k in sorted(comp.parameters))
