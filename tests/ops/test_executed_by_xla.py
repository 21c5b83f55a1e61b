"""Maps against XLA itself: small jax programs are lowered to HLO (what hlo-index reads) and run by
XLA on the CPU with one input element set to NaN; the output elements that come out NaN are the
ones that read it. For every sampled input element that set must equal what the maps say.

NaN propagates through the arithmetic of these programs (add, multiply, max, dot, convolution,
copies), and does not where an element is not read: under a dynamic-update-slice's update, where
an overwriting scatter lands, in a loop iteration that skips the row. Runtime offsets / indices
are fixed per run; the maps are evaluated at the runtime-variable values they imply.

jax / jaxlib are not test dependencies: without them these tests skip.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
lax = pytest.importorskip("jax.lax")

from hlo_index.affine import IndexingMap  # noqa: E402
from hlo_index.context import AnalysisContext  # noqa: E402
from hlo_index.fusion import computation_output_to_input  # noqa: E402
from hlo_index.hlo import parse_module_text  # noqa: E402
from hlo_index.ops import output_to_input  # noqa: E402
from hlo_index.verify import runtime_as_range  # noqa: E402

jax.config.update("jax_platforms", "cpu")
SAMPLES = 12


def lowered_module(fn, args):
    text = jax.jit(fn).lower(*args).compiler_ir(dialect="hlo").as_hlo_text()
    return parse_module_text(text)


def nan_readers(fn, args, arg_index: int, points) -> dict[tuple, set]:
    """For each element x of argument ``arg_index``: the output elements that are NaN when x is."""
    out = {}
    run = jax.jit(fn)
    for x in points:
        marked = list(args)
        values = np.array(args[arg_index], dtype=np.float32)
        values[x] = np.nan
        marked[arg_index] = jnp.asarray(values)
        result = np.asarray(run(*marked))
        out[x] = {tuple(int(v) for v in p) for p in np.argwhere(np.isnan(result))}
    return out


def map_readers(maps, out_dims, points, runtime=None) -> dict[tuple, set]:
    """For each element x: the output elements whose read set (at ``runtime``) contains x."""
    readers = {x: set() for x in points}
    for y in itertools.product(*(range(n) for n in out_dims)):
        read = set()
        for m in maps:
            assert not m.is_undefined, m.undefined_reason
            if not m.is_known_empty:
                read |= m.read_set(y, runtime)
        for x in read & readers.keys():
            readers[x].add(y)
    return readers


def sample(dims, count=SAMPLES, seed=0):
    every = list(itertools.product(*(range(n) for n in dims)))
    if len(every) <= count:
        return every
    rng = np.random.default_rng(seed)
    picked = {every[0], every[-1]} | {every[int(k)] for k in rng.choice(len(every), count - 2, replace=False)}
    return sorted(picked)


def the_op(module, opcode: str):
    (instr,) = [i for i in module.entry.instructions if i.opcode == opcode]
    return instr


def operand_of_argument(instr, arg_index: int) -> int:
    (k,) = [k for k, o in enumerate(instr.operands) if o.opcode == "parameter" and o.parameter_number == arg_index]
    return k


def check_op(fn, args, opcode, arg_index, runtime=None):
    """The op's own maps (operand fed straight from argument ``arg_index``) against XLA."""
    module = lowered_module(fn, args)
    instr = the_op(module, opcode)
    maps = output_to_input(instr)[operand_of_argument(instr, arg_index)].maps
    points = sample(np.shape(args[arg_index]))
    assert map_readers(maps, instr.shape.dims, points, runtime) == nan_readers(fn, args, arg_index, points)
    return maps


def check_program(fn, args, arg_index):
    """The whole program's maps (the ENTRY computation: loops, conditionals...) against XLA. Maps
    whose runtime variables stand for values computed inside the program are read as the union
    over those values: then XLA's readers must be contained in them."""
    module = lowered_module(fn, args)
    with AnalysisContext():
        per_param = computation_output_to_input(module.entry, 0)
        maps = tuple(m for (p, e), ms in per_param.items() if p == arg_index for m in ms)
    points = sample(np.shape(args[arg_index]))
    truth = nan_readers(fn, args, arg_index, points)
    if any(m.runtime_vars for m in maps):
        union = map_readers(tuple(runtime_as_range(m) for m in maps), module.entry.root.shape.dims, points)
        assert all(truth[x] <= union[x] for x in points), (truth, union)
    else:
        assert map_readers(maps, module.entry.root.shape.dims, points) == truth
    return maps


def floats(*dims, seed=1):
    return jnp.asarray(np.random.default_rng(seed).uniform(1, 2, dims).astype(np.float32))


# ---- the new rules: overwritten operands ---------------------------------------------------


@pytest.mark.parametrize("offsets", [(0, 0), (1, 2), (3, 3), (4, 5), (9, 1)])
def test_dynamic_update_slice_operand_is_read_where_the_update_does_not_land(offsets):
    def fn(x, u, i, j):
        return lax.dynamic_update_slice(x, u, (i, j))

    args = (floats(5, 6), floats(2, 3, seed=2), jnp.int32(offsets[0]), jnp.int32(offsets[1]))
    clamped = (min(offsets[0], 3), min(offsets[1], 3))
    maps = check_op(fn, args, "dynamic-update-slice", 0, clamped)
    assert len(maps) == 4 and all(m.runtime_vars for m in maps)
    check_op(fn, args, "dynamic-update-slice", 1, clamped)


ROW = lax.ScatterDimensionNumbers(update_window_dims=(0,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))


@pytest.mark.parametrize("row", [0, 3, 5, 6, 40])
def test_scatter_that_sets_one_row_reads_the_operand_elsewhere(row):
    def fn(x, i, u):
        return lax.scatter(x, i, u, ROW, mode=lax.GatherScatterMode.FILL_OR_DROP)

    args = (floats(6, 4), jnp.asarray([row], jnp.int32), floats(4, seed=3))
    # the runtime variable: the row where in range, 6 (the dim) where the update is skipped
    check_op(fn, args, "scatter", 0, (row if row <= 5 else 6,))
    update = output_to_input(the_op(lowered_module(fn, args), "scatter"))[2].maps
    if row <= 5:  # the update map's variable is the start, for a window that lands
        check_op(fn, args, "scatter", 2, (row,))
    else:
        assert not any(nan_readers(fn, args, 2, sample((4,))).values()) and update


ROWS = lax.ScatterDimensionNumbers(
    update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)


def test_scatter_add_reads_the_operand_everywhere():
    def fn(x, i, u):
        return lax.scatter_add(x, i, u, ROWS, mode=lax.GatherScatterMode.FILL_OR_DROP)

    args = (floats(6, 4), jnp.asarray([[4], [1], [4]], jnp.int32), floats(3, 4, seed=3))
    assert check_op(fn, args, "scatter", 0) == (IndexingMap.identity((6, 4)),)


def test_scatter_that_sets_rows_at_constant_indices_reads_the_rest():
    def fn(x, u):
        return lax.scatter(x, jnp.asarray([[4], [1], [4]], jnp.int32), u, ROWS, mode=lax.GatherScatterMode.FILL_OR_DROP)

    args = (floats(6, 4), floats(3, 4, seed=3))
    maps = check_op(fn, args, "scatter", 0)
    assert maps and not any(m.runtime_vars for m in maps)


def test_scatter_that_sets_rows_at_runtime_indices_is_undefined():
    def fn(x, i, u):
        return lax.scatter(x, i, u, ROWS, mode=lax.GatherScatterMode.FILL_OR_DROP)

    args = (floats(6, 4), jnp.asarray([[4], [1], [4]], jnp.int32), floats(3, 4, seed=3))
    instr = the_op(lowered_module(fn, args), "scatter")
    (m,) = output_to_input(instr)[0].maps
    assert m.is_undefined and "depends on every runtime index vector" in m.undefined_reason


# ---- a sample of the existing rules ----------------------------------------------------------


def test_dot_general():
    def fn(a, b):
        return lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))

    args = (floats(2, 3, 4), floats(2, 4, 5, seed=2))
    check_op(fn, args, "dot", 0)
    check_op(fn, args, "dot", 1)


def test_convolution_with_padding_stride_and_dilation():
    def fn(x, w):
        return lax.conv_general_dilated(
            x, w, window_strides=(2,), padding=((1, 2),), rhs_dilation=(2,), dimension_numbers=("NWC", "WIO", "NWC")
        )

    args = (floats(1, 9, 2), floats(3, 2, 3, seed=2))
    check_op(fn, args, "convolution", 0)
    check_op(fn, args, "convolution", 1)


def test_reduce_window_max():
    def fn(x):
        return lax.reduce_window(x, -np.inf, lax.max, (2, 3), (1, 2), ((0, 1), (1, 1)))

    check_op(fn, (floats(5, 7),), "reduce-window", 0)


def test_dynamic_slice():
    def fn(x, i, j):
        return lax.dynamic_slice(x, (i, j), (2, 3))

    args = (floats(5, 6), jnp.int32(4), jnp.int32(1))
    check_op(fn, args, "dynamic-slice", 0, (3, 1))


def test_gather_rows():
    def fn(x, i):
        return x[i]

    args = (floats(6, 3), jnp.asarray([5, 0, 2], jnp.int32))
    module = lowered_module(fn, args)
    assert any(i.opcode == "gather" for i in module.entry.instructions)


def test_pad_and_reverse_and_transpose_program():
    def fn(x):
        return jnp.transpose(lax.rev(lax.pad(x, 0.0, ((1, 2, 1), (0, -1, 0))), (0,)))

    check_program(fn, (floats(3, 4),), 0)


def test_fori_loop_reading_the_counter_row():
    """Iteration k reads row k: with the trip count known, the counter is folded per iteration
    (through jax's call and negative-index select), so the maps read rows 0, 1, 2 exactly."""

    def fn(x):
        def body(k, acc):
            return acc * 2.0 + lax.dynamic_index_in_dim(x, k, 0, keepdims=False)

        return lax.fori_loop(0, 3, body, jnp.zeros(x.shape[1:], x.dtype))

    maps = check_program(fn, (floats(7, 4),), 0)
    assert not any(m.runtime_vars for m in maps)
    assert set().union(*(m.read_set((1,)) for m in maps)) == {(0, 1), (1, 1), (2, 1)}


def test_fori_loop_summing_every_other_row():
    """The row 2k + 1 (integer arithmetic, jax's negative-index select) is folded per iteration:
    exactly rows 1, 3, 5, as one map over the iteration."""

    def fn(x):
        def body(k, acc):
            return acc + lax.dynamic_slice_in_dim(x, 2 * k + 1, 1, 0)[0]

        return lax.fori_loop(0, 3, body, jnp.zeros(x.shape[1:], x.dtype))

    maps = check_program(fn, (floats(7, 4),), 0)
    assert not any(m.runtime_vars for m in maps) and len(maps) == 1
    assert maps[0].read_set((2,)) == {(1, 2), (3, 2), (5, 2)}


@pytest.mark.parametrize("lower,upper,scale,shift", [(-3, 0, 1, 0), (0, 4, 2, 3), (1, 6, 1, -2), (0, 3, -1, 0)])
def test_fori_loop_row_through_normalisation_and_clamp(lower, upper, scale, shift):
    """Negative rows wrap (jax's select), rows past the end clamp (XLA's dynamic-slice): each
    iteration's row folded exactly, checked against XLA's NaN propagation."""

    def fn(x):
        def body(k, acc):
            return acc + lax.dynamic_slice_in_dim(x, scale * k + shift, 2, 0).sum(0)

        return lax.fori_loop(lower, upper, body, jnp.zeros(x.shape[1:], x.dtype))

    maps = check_program(fn, (floats(7, 3),), 0)
    assert not any(m.runtime_vars for m in maps)


def test_scan_state_reads_every_row_and_each_output_row_its_own():
    """lax.scan: the carried sum reads every row of xs (one map over the iteration)."""

    def fn(xs):
        def step(c, x):
            return c + x, c * x

        return lax.scan(step, jnp.zeros(xs.shape[1:], xs.dtype), xs)[0]

    maps = check_program(fn, (floats(5, 3),), 0)
    assert not any(m.runtime_vars for m in maps)


def test_cond_with_a_constant_predicate_reads_the_branch_taken():
    def fn(x):
        return lax.cond(True, lambda v: v[::-1] * 2.0, lambda v: v + 1.0, x)

    assert check_program(fn, (floats(5),), 0)


# ---- HLO text run as it is (ops jax does not emit) -----------------------------------------


def run_hlo(text: str, args) -> list[np.ndarray]:
    from jax._src.lib import _jax, xla_client

    module = xla_client.hlo.hlo_module_from_text(text)
    stablehlo = _jax.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    client = jax.devices("cpu")[0].client
    devices = client.devices()[:1]
    executable = client.compile_and_load(stablehlo, xla_client.DeviceList(tuple(devices)), xla_client.CompileOptions())
    outputs = executable.execute([jax.device_put(np.asarray(a), devices[0]) for a in args])
    return [np.asarray(o) for o in outputs]


def check_hlo_root(text: str, args, param: int, runtime=None):
    """Every output of the ENTRY root (an op fed by parameters) against XLA, for parameter ``param``."""
    instr = parse_module_text(text).entry.root
    (k,) = [k for k, o in enumerate(instr.operands) if o.opcode == "parameter" and o.parameter_number == param]
    points = sample(np.shape(args[param]))
    truth: dict[int, dict] = {j: {} for j in range(instr.shape.num_outputs)}
    for x in points:
        marked = [np.array(a, dtype=np.float32) if i == param else a for i, a in enumerate(args)]
        marked[param][x] = np.nan
        for j, result in enumerate(run_hlo(text, marked)):
            truth[j][x] = {tuple(int(v) for v in p) for p in np.argwhere(np.isnan(result))}
    for j in range(instr.shape.num_outputs):
        maps = output_to_input(instr, j)[k].maps
        assert map_readers(maps, instr.shape.leaf(j).dims, points, runtime) == truth[j], (j, [str(m) for m in maps])


def values(*dims, seed=1):
    return np.random.default_rng(seed).uniform(1, 2, dims).astype(np.float32)


BN_TRAINING = """HloModule m
ENTRY e {
  x = f32[2,3,2] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  ROOT bn = (f32[2,3,2], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
}
"""

BN_INFERENCE = """HloModule m
ENTRY e {
  x = f32[2,2,3] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  m = f32[3] parameter(3)
  v = f32[3] parameter(4)
  ROOT bn = f32[2,2,3] batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index=2
}
"""

BN_GRAD = """HloModule m
ENTRY e {
  x = f32[3,2] parameter(0)
  s = f32[3] parameter(1)
  m = f32[3] parameter(2)
  v = f32[3] parameter(3)
  dy = f32[3,2] parameter(4)
  ROOT bn = (f32[3,2], f32[3], f32[3]) batch-norm-grad(x, s, m, v, dy), epsilon=0.001, feature_index=0
}
"""


@pytest.mark.parametrize("param", range(3))
def test_batch_norm_training(param):
    check_hlo_root(BN_TRAINING, [values(2, 3, 2), values(3, seed=2), values(3, seed=3)], param)


@pytest.mark.parametrize("param", range(5))
def test_batch_norm_inference(param):
    check_hlo_root(BN_INFERENCE, [values(2, 2, 3)] + [values(3, seed=s) for s in range(2, 6)], param)


@pytest.mark.parametrize("param", range(5))
def test_batch_norm_grad(param):
    check_hlo_root(BN_GRAD, [values(3, 2)] + [values(3, seed=s) for s in range(2, 5)] + [values(3, 2, seed=6)], param)


VARIADIC_SCATTER = """HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = f32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = f32[] parameter(3)
  c = pred[] compare(v0, v1), direction=GT
  v = f32[] maximum(v0, v1)
  i = f32[] select(c, i0, i1)
  ROOT r = (f32[], f32[]) tuple(v, i)
}
ENTRY e {
  a = f32[6] parameter(0)
  b = f32[6] parameter(1)
  idx = s32[2,1] constant({ {4}, {1} })
  ua = f32[2] parameter(2)
  ub = f32[2] parameter(3)
  ROOT s = (f32[6], f32[6]) scatter(a, b, idx, ua, ub), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=argmax
}
"""  # noqa: E501  HLO as XLA prints it, one instruction per line


def test_variadic_scatter_values_and_their_indices():
    """The value output reads its own old values everywhere; the index output reads both old
    values where an update lands (the comparison) - NaN shows the value's path only; checked on a
    (value) parameter whose reads are all arithmetic: a."""
    args = [values(6), values(6, seed=2), values(2, seed=3), values(2, seed=4)]
    instr = parse_module_text(VARIADIC_SCATTER).entry.root
    points = sample((6,))
    truth = {}
    for x in points:
        marked = [a.copy() for a in args]
        marked[0][x] = np.nan
        truth[x] = {tuple(int(v) for v in p) for p in np.argwhere(np.isnan(run_hlo(VARIADIC_SCATTER, marked)[0]))}
    assert map_readers(output_to_input(instr, 0)[0].maps, (6,), points) == truth
