"""The arithmetic first-warp read of an affine thread map equals the scan that evaluates the map
on the warps one by one (the reference): random affine maps, constraints, grids, loops and layouts,
and the thread maps of the GPU corpus dumps."""

import random
from pathlib import Path

import pytest

from hlo_index.affine import IndexingMap, Interval, ceildiv, const, dim, floordiv, mod, range_var, runtime_var
from hlo_index.affine.bounds import Domain
from hlo_index.affine.expr import DIM
from hlo_index.analyses import warp_reads
from hlo_index.analyses.emitters import ThreadPlan
from hlo_index.analyses.gpu_devices import RTX_A6000
from hlo_index.analyses.warp_reads import scanned_warp_read, warp_read
from hlo_index.context import current
from hlo_index.hlo.build import array_shape

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


def _affine(rng: random.Random, variables: list) -> object:
    e = const(rng.randint(-3, 40))
    for v in rng.sample(variables, rng.randint(1, min(4, len(variables)))):
        e = e + v * rng.choice([-2, -1, 1, 1, 1, 2, 3, 4, 8, 32, 128, 512])
    return e


def _random_case(rng: random.Random):
    tpb = rng.choice([16, 32, 64, 96, 128, 256])
    blocks = rng.randint(1, 40)
    loops = rng.choice([("unroll",), ("major", "vector"), ("a", "b", "c")])
    sizes = [rng.choice([1, 2, 3, 4, 8]) for _ in loops]
    innermost = rng.choice([None, 0, len(loops) - 1])
    plan = ThreadPlan("loop", tpb, blocks, loops, innermost)
    domain = [Interval(0, tpb - 1), Interval(0, blocks - 1)] + [Interval(0, n - 1) for n in sizes]
    ranges = [Interval(0, rng.choice([1, 2, 5, 7]) - 1) for _ in range(rng.randint(0, 2))]
    runtimes = [Interval(rng.randint(0, 3), rng.randint(4, 9)) for _ in range(rng.randint(0, 1))]
    variables = [dim(i) for i in range(len(domain))]
    variables += [range_var(i) for i in range(len(ranges))] + [runtime_var(i) for i in range(len(runtimes))]
    rank = rng.randint(1, 3)
    results = [_affine(rng, variables) for _ in range(rank)]
    # the global thread number (a concatenate's or a sliced operand's maps): warps after warp 0
    linear = dim(0) + dim(1) * rng.choice([tpb, tpb, 7, 0]) + (dim(2) * rng.choice([1, 4]) if len(domain) > 2 else 0)
    if rng.random() < 0.3:  # divisions, nested ones too (a reshape's maps)
        k = rng.randrange(rank)
        inner = results[k] if rng.random() < 0.5 else linear + rng.randint(-50, 50)
        if rng.random() < 0.3:
            inner = rng.choice([floordiv, mod])(inner, rng.choice([4, 64])) + dim(1) * 8
        results[k] = rng.choice([floordiv, mod, ceildiv])(inner, rng.choice([2, 3, 8, 64, 768]))
    constraints = []
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        e = linear if rng.random() < 0.3 else _affine(rng, variables)
        if rng.random() < 0.15:
            e = rng.choice([floordiv, mod])(e, rng.choice([3, 8]))
        lo = rng.randint(-20, 200) if rng.random() < 0.7 else rng.randint(200, 3000)
        constraints.append((e, Interval(lo, lo + rng.choice([0, 5, 31, 100, 5000]))))
    m = IndexingMap(domain, ranges, runtimes, results, constraints)
    return m, _random_shape(rng, [rng.choice([1, 3, 8, 64, 100]) for _ in range(rank)]), plan


def _random_shape(rng: random.Random, dims: list[int]):
    """An operand of ``dims`` in a random element type and a random layout."""
    minor_to_major = list(range(len(dims)))
    rng.shuffle(minor_to_major)
    return array_shape(rng.choice(["f32", "bf16", "s8", "f64"]), dims, minor_to_major)


def _against_the_scan(seed: int, count: int, make_case):
    """``count`` cases drawn by ``make_case``, each with its text and the scan's warp read, in one
    analysis context."""
    rng = random.Random(seed)
    with current().child():
        for _ in range(count):
            m, shape, plan = make_case(rng)
            text = str(m)
            yield m, shape, plan, text, scanned_warp_read(m, shape, plan, RTX_A6000, text)


def test_arithmetic_warp_reads_equal_the_scan():
    arithmetic = 0
    for m, shape, plan, text, expected in _against_the_scan(20261128, 3000, _random_case):
        assert warp_read(m, shape, plan, RTX_A6000, text) == expected, text
        arithmetic += warp_reads._arithmetic_warp_read(m, shape, plan, RTX_A6000, text) is not None
    # most cases take the arithmetic path, and the scan still answers the rest (a first reading
    # warp past the ones the constraints leave possible, or none)
    assert 1000 < arithmetic < 2900


def _long_loop_case(rng: random.Random):
    """A map without constraints or divisions whose innermost loop is long (a row reduction's
    range variable): more (lane, iteration) points than the arithmetic path lists."""
    tpb = rng.choice([4, 32, 64, 256])
    blocks = rng.randint(1, 8)
    plan = ThreadPlan("reduction", tpb, blocks, ("major", "vector"), 1)
    domain = [Interval(0, tpb - 1), Interval(0, blocks - 1), Interval(0, 0), Interval(0, rng.choice([0, 1, 3]))]
    ranges = [Interval(0, rng.choice([40, 300, 2048]) - 1)]
    if rng.random() < 0.3:
        domain[0] = Interval(0, rng.randint(1, tpb - 1))  # the last threads read nothing
    variables = [dim(0), dim(1), dim(3), range_var(0)]
    rank = rng.randint(1, 3)
    results = [const(rng.randint(0, 3)) + v * rng.choice([1, 1, 2, 3]) for v in rng.sample(variables, rank)]
    m = IndexingMap(domain, ranges, [], results, [])
    # a dim just longer than the loop's reach leaves small gaps between the lanes' runs (two runs
    # may share a 128-byte segment)
    dims = [
        Domain(domain, ranges).bounds(e).hi + 1 + rng.choice([0, 1, 3, 64])
        if range_var(0) in e.variables()
        else rng.choice([64, 300, 2048])
        for e in results
    ]
    return m, _random_shape(rng, dims), plan


def test_long_loops_read_as_runs_equal_the_scan():
    runs = 0
    for m, shape, plan, text, expected in _against_the_scan(20261129, 300, _long_loop_case):
        arithmetic = warp_reads._arithmetic_warp_read(m, shape, plan, RTX_A6000, text)
        assert arithmetic == expected, text
        runs += RTX_A6000.warp_size * m.range_vars[0].size > warp_reads._AFFINE_POINTS
    assert runs > 200  # most cases are past what the arithmetic path lists point by point


def _divided_chain(rng: random.Random) -> list[tuple[str, int, int]]:
    """Layers of floordiv or mod, each with a constant added (0 mostly): the flattened image's row
    and column that a padded convolution's input fusion keeps."""
    return [
        (rng.choice(["floordiv", "mod"]), rng.choice([2, 3, 7, 64, 805, 1221]), rng.choice([0, 0, 0, -5, -1, 2, 5]))
        for _ in range(rng.randint(1, 3))
    ]


def _divided_constraint(chain: list[tuple[str, int, int]], x):
    e = x
    for op, q, c in chain:
        e = (floordiv if op == "floordiv" else mod)(e, q) + c
    return e


def _chain_value(chain: list[tuple[str, int, int]], x: int) -> int:
    """The chain's value in plain Python integers (floor division and a nonnegative modulo)."""
    for op, q, c in chain:
        x = (x // q if op == "floordiv" else x % q) + c
    return x


def test_divided_lower_bound_is_never_passed_by_a_value_that_meets_the_constraint():
    """Brute force: every x in [0, bound) fails ``e >= lo``, for chains of divisions over x."""
    rng = random.Random(20261130)
    forms = {(DIM, 0): (0, 1, 0, 0)}  # x = d0, one lane per value
    checked = 0
    for _ in range(3000):
        chain = _divided_chain(rng)
        e = _divided_constraint(chain, dim(0))
        lo = rng.randint(-3, 40)
        found = warp_reads._divided_lower_bound(e, lo, forms, range(1))
        if found is None:
            continue
        (c, per_d0, _, _), bound = found
        assert per_d0 == 1  # the bound is on c + d0 (the simplifier may move a constant inside)
        for d0 in range(min(bound - c, 5000)):
            assert _chain_value(chain, d0) < lo, (str(e), lo, bound, d0)
        checked += bound > c
    assert checked > 1000


def _first_warp_behind_divisions_case(rng: random.Random):
    """A thread map whose first reading warp is far from warp 0 and found only through a
    constraint on divisions of the global thread number (``((t floordiv 1221) mod 805) in [3, 802]``:
    a padded image's interior)."""
    tpb = rng.choice([32, 64, 128, 256])
    blocks = rng.randint(20, 400)
    plan = ThreadPlan("loop", tpb, blocks, ("unroll",), None)
    domain = [Interval(0, tpb - 1), Interval(0, blocks - 1), Interval(0, 0)]
    shift = rng.randint(0, 40)
    linear = dim(0) + dim(1) * tpb + shift
    constraints = []
    for _ in range(rng.randint(1, 2)):
        chain = _divided_chain(rng)
        # met by some thread: the value at a thread drawn from the whole grid
        lo = _chain_value(chain, shift + rng.randrange(tpb * blocks))
        constraints.append((_divided_constraint(chain, linear), Interval(lo, lo + rng.choice([0, 3, 700, 100000]))))
    results = [floordiv(linear, rng.choice([1, 7, 64])), mod(linear, rng.choice([3, 64, 128]))]
    m = IndexingMap(domain, [], [], results, constraints)
    return m, _random_shape(rng, [blocks * tpb + 50, 128]), plan


def test_first_reading_warps_found_through_divided_constraints_equal_the_scan():
    arithmetic = 0
    for m, shape, plan, text, expected in _against_the_scan(20261130, 600, _first_warp_behind_divisions_case):
        assert warp_read(m, shape, plan, RTX_A6000, text) == expected, text
        arithmetic += warp_reads._arithmetic_warp_read(m, shape, plan, RTX_A6000, text) is not None
    # without the bound through divisions, the cases whose first reading warp is past the 32 tried
    # from warp 0 all went to the scan
    assert arithmetic > 450  # 354 without it


@pytest.mark.parametrize(
    "name",
    [
        "corpus/gpt12_train/gpt12_train_step.after_optimizations.hlo.txt.gz",
        "field/gpu/xla_hlo_dump_parse.tf_resnet.module_0039.gpu_after_optimizations.txt",
        "field/gpu/JAX-Toolbox.nsys-jax.pax_fsdp4_4proc_proc0.module_0040.pjit__wrapped_step_fn."
        "sm_8.0_gpu_after_optimizations.txt.gz",
    ],
)
def test_arithmetic_warp_reads_equal_the_scan_on_a_dump(name, monkeypatch):
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{name} not in the shared data")
    from hlo_index.analyses.gpu_coalescing import fusion_coalescing
    from hlo_index.hlo.loader import load_path

    calls = []
    original = warp_reads.warp_read

    def recorded(m, shape, plan, device, text=None):
        calls.append((m, shape, plan, device))
        return original(m, shape, plan, device, text)

    monkeypatch.setattr(warp_reads, "warp_read", recorded)
    with current().child():
        [module] = load_path(str(path))
        for fusion in module.fusions:
            fusion_coalescing(fusion)
        assert len(calls) > 100
        for m, shape, plan, device in calls:
            assert original(m, shape, plan, device) == scanned_warp_read(m, shape, plan, device), str(m)
