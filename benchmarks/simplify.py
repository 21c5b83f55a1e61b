"""Cold simplification benchmark for the affine engine.

Times ``IndexingMap.simplified()`` cold (``clear_caches()`` before every run, map text parsed
afresh) on a fixed set of maps built from reshape / transpose / slice chains, the spec's
simplifier examples and the peer cases; the two reshape chains are timed as whole
compositions (step maps built and composed, each composition simplified). Reports median and
p95 and writes ``benchmarks/results/simplify.json``. It counts the reshape round trips that
simplify to the identity, and, when islpy is importable, how often isl needs fewer divisions
than our simplified form on seeded random maps (quality; "raw" counts every floordiv/mod group,
"comparable" first folds one division per result into its output variable as isl does).

When tinygrad is importable (never a dependency; install it into the venv only to measure) the
same peer cases are also built from tinygrad ``Variable``s with ``//`` and ``%`` and simplified
cold in the same run (see :mod:`tinygrad_peer` below for what "cold" can and cannot clear there).
For reference: tinygrad 0.14 needs 0.2-5 ms per such map and 4-9 ms per chain cold;
Inductor 3.5-18 ms per map (Inductor is not measured here).
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path

from hlo_index.affine import IndexingMap, clear_caches, const, dim, parse_map
from hlo_index.affine.expr import CEILDIV, FLOORDIV, MOD, SUM

RUNS = 7
PEER_CASES = {
    "peer: d0 + d1 floordiv 16": "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
    "peer: digits 100/10": "(d0, d1, d2) -> ((100d0 + 10d1 + d2) floordiv 100, ((100d0 + 10d1 + "
    "d2) mod 100) floordiv 10, d2 mod 10), "
    "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
    "peer: 16d0 + 4d1 + d2": "(d0, d1, d2) -> ((16d0 + 4d1 + d2) floordiv 8, (16d0 + 4d1 + d2) "
    "mod 8), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
    "peer: 9 - (..) floordiv 11": "(d0, d1) -> (9 - ((-11d0 - d1 + 109) floordiv 11)), "
    "domain: d0 in [0, 9], d1 in [0, 10]",
}
PEER_EXPECTED = {
    "peer: d0 + d1 floordiv 16": "(d0, d1)",
    "peer: digits 100/10": "(d0, d1, d2)",
    "peer: 16d0 + 4d1 + d2": "(d0 * 2 + (d1 * 4 + d2) floordiv 8, (d1 * 4 + d2) mod 8)",
    "peer: 9 - (..) floordiv 11": "(d0)",
}


# ------------------------------------------------------------------------- map builders
def _strides(shape):
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def reshape(in_shape, out_shape) -> IndexingMap:
    """Output-to-input map of ``reshape`` from ``in_shape`` to ``out_shape`` (spec: Reshape)."""
    linear = const(0)
    for i, stride in enumerate(_strides(out_shape)):
        linear = linear + dim(i) * stride
    results = []
    for j, (n, stride) in enumerate(zip(in_shape, _strides(in_shape))):
        e = linear.floordiv(stride)
        results.append(e.mod(n) if j > 0 else e)
    return IndexingMap.from_shape_dims(out_shape, results)


def transpose(in_shape, permutation) -> IndexingMap:
    out_shape = [in_shape[p] for p in permutation]
    results = [None] * len(permutation)
    for i, p in enumerate(permutation):
        results[p] = dim(i)
    return IndexingMap.from_shape_dims(out_shape, results)


def slice_map(in_shape, starts, strides) -> IndexingMap:
    out_shape = [max(1, (n - s) // k) for n, s, k in zip(in_shape, starts, strides)]
    return IndexingMap.from_shape_dims(out_shape, [dim(i) * k + s for i, (s, k) in enumerate(zip(starts, strides))])


def chain_10_10_10():
    a, b = [10, 10, 10], [50, 20]
    return reshape(a, b).compose(reshape(b, a))


def chain_attention():
    m = reshape([8, 128, 12, 64], [8, 128, 768])
    for step in (
        transpose([8, 128, 768], (1, 0, 2)),
        reshape([128, 8, 768], [1024, 768]),
        reshape([1024, 768], [128, 8, 768]),
        transpose([128, 8, 768], (1, 0, 2)),
        reshape([8, 128, 768], [8, 128, 12, 64]),
    ):
        m = m.compose(step)
    return m


def _factorizations(total, rng, parts):
    primes = []
    n, p = total, 2
    while n > 1:
        while n % p == 0:
            primes.append(p)
            n //= p
        p += 1
    shape = [1] * parts
    for prime in primes:
        shape[rng.randrange(parts)] *= prime
    return shape


def generated_maps(count: int, seed: int = 0) -> list[tuple[str, str]]:
    """Unsimplified map texts: compositions of reshape / transpose / slice steps, made by plain
    substitution (no simplification) so that simplify has the whole job."""
    rng = random.Random(seed)
    cases = []
    while len(cases) < count:
        total = rng.choice([24, 60, 64, 120, 256, 360, 512, 1000, 4096])
        a = _factorizations(total, rng, rng.randint(2, 4))
        b = _factorizations(total, rng, rng.randint(1, 3))
        steps = [reshape(b, a), reshape(a, b)]
        kind = rng.choice(["reshape", "transpose", "slice"])
        if kind == "transpose":
            perm = list(range(len(a)))
            rng.shuffle(perm)
            steps.insert(1, transpose(a, perm))
            steps[2] = reshape([a[p] for p in perm], b)
        elif kind == "slice":
            starts = [rng.randrange(0, max(1, n // 2)) for n in b]
            steps.append(slice_map(b, starts, [rng.choice([1, 2]) for _ in b]))
        m = steps[0]
        for step in steps[1:]:
            m = _substitute(m, step)
        cases.append((f"{kind} {a}<->{b}", str(m)))
    return cases


def _substitute(outer: IndexingMap, inner: IndexingMap) -> IndexingMap:
    from hlo_index.affine.expr import DIM, replace_variables

    memo: dict = {}
    results = [
        replace_variables(e, lambda v: inner.results[v.value] if v.kind == DIM else None, memo) for e in outer.results
    ]
    return IndexingMap(inner.dims, (), (), results)


# ------------------------------------------------------------------ tinygrad peer measurement
# Each peer case as (variable bounds, index expressions over those variables, division count of
# the simplest form). The builders use only + - * // %, so the same function evaluates on Python
# ints (floor semantics, the reference) and builds tinygrad UOps.
def _chain_10_10_10_exprs(d0, d1, d2):
    linear = 100 * d0 + 10 * d1 + d2  # [10,10,10] -> [50,20]
    row, col = linear // 20, linear % 20
    linear2 = 20 * row + col  # [50,20] -> [10,10,10]
    return [linear2 // 100, (linear2 // 10) % 10, linear2 % 10]


TINYGRAD_CASES = {
    "peer: d0 + d1 floordiv 16": ({"d0": (0, 6), "d1": (0, 14)}, lambda d0, d1: [d0 + d1 // 16, d1 % 16], 0),
    "peer: digits 100/10": (
        {"d0": (0, 9), "d1": (0, 9), "d2": (0, 9)},
        lambda d0, d1, d2: [(100 * d0 + 10 * d1 + d2) // 100, ((100 * d0 + 10 * d1 + d2) % 100) // 10, d2 % 10],
        0,
    ),
    "peer: 16d0 + 4d1 + d2": (
        {"d0": (0, 9), "d1": (0, 9), "d2": (0, 9)},
        lambda d0, d1, d2: [(16 * d0 + 4 * d1 + d2) // 8, (16 * d0 + 4 * d1 + d2) % 8],
        2,
    ),
    "peer: 9 - (..) floordiv 11": (
        {"d0": (0, 9), "d1": (0, 10)},
        lambda d0, d1: [9 - ((-11 * d0 - d1 + 109) // 11)],
        0,
    ),
    "reshape [10,10,10]->[50,20]->[10,10,10]": ({"d0": (0, 9), "d1": (0, 9), "d2": (0, 9)}, _chain_10_10_10_exprs, 0),
}


def tinygrad_peer():
    """Cold tinygrad timings of :data:`TINYGRAD_CASES`, or None when tinygrad is not importable.

    Cold means: before every run, tinygrad's ``fold_divmod_general`` memo is cleared and every UOp
    of the previous run is dropped and garbage-collected, so the hash-consing table
    (``UOpMetaClass.ucache``, weak references) holds no live node and the per-node cached
    properties (vmin/vmax, ...) are gone with the nodes. Not cleared: the pattern matcher's
    one-time lazy compilation of its rules (a per-process start-up cost, paid in one untimed
    warm-up run). Timed: ``UOp.sink(*exprs).simplify()`` (expression construction excluded, as
    parsing is for ours; the chain is composed by construction, so only simplification is timed
    there too). Rendering happens after the timer."""
    try:
        import tinygrad
        from tinygrad import Variable
        from tinygrad.uop import divandmod
        from tinygrad.uop.ops import UOp
    except ImportError:
        return None
    import gc
    import itertools

    def build(bounds, make):
        variables = [Variable(name, lo, hi) for name, (lo, hi) in bounds.items()]
        return UOp.sink(*make(*variables))

    def run(bounds, make):
        divandmod.fold_divmod_general.cache_clear()
        gc.collect()
        sink = build(bounds, make)
        start = time.perf_counter()
        result = sink.simplify()
        return time.perf_counter() - start, result

    cases = {}
    for name, (bounds, make, simplest_divisions) in TINYGRAD_CASES.items():
        run(bounds, make)  # warm-up: pattern compilation only
        samples = [run(bounds, make)[0] for _ in range(RUNS)]
        result = run(bounds, make)[1]
        rendered = [e.render(simplify=False) for e in result.src]
        divisions = sum(text.count("//") + text.count("%") for text in rendered)
        names = list(bounds)
        correct = all(
            [e.sym_infer(dict(zip(names, point))) for e in result.src] == make(*point)
            for point in itertools.product(*(range(lo, hi + 1) for lo, hi in bounds.values()))
        )
        cases[name] = {
            "seconds": statistics.median(samples),
            "rendered": rendered,
            "divisions": divisions,
            "simplest_divisions": simplest_divisions,
            "correct": correct,
            "simplest_form": correct and divisions <= simplest_divisions,
        }
        del result
    return {"version": getattr(tinygrad, "__version__", None) or _dist_version("tinygrad"), "cases": cases}


def _dist_version(name):
    from importlib.metadata import version

    return version(name)


# ------------------------------------------------------------------------------ timing
def time_cold(text: str) -> float:
    samples = []
    for _ in range(RUNS):
        clear_caches()
        m = parse_map(text)
        start = time.perf_counter()
        m.simplified()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def time_chain(build) -> float:
    samples = []
    for _ in range(RUNS):
        clear_caches()
        start = time.perf_counter()
        build()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _division_uses(m: IndexingMap) -> dict:
    """(operand, divisor) -> number of uses under floordiv/ceildiv/mod; mod and floordiv of the
    same pair share one isl div."""
    uses: dict = {}

    def walk(e):
        if e.kind in (FLOORDIV, CEILDIV, MOD):
            uses[(e.operand, e.value)] = uses.get((e.operand, e.value), 0) + 1
            walk(e.operand)
        elif e.kind == SUM:
            for atom, _ in e.terms:
                walk(atom)

    for e in m.results:
        walk(e)
    for e, _ in m.constraints:
        walk(e)
    return uses


def division_groups(m: IndexingMap) -> int:
    return len(_division_uses(m))


def comparable_divisions(m: IndexingMap) -> int:
    """Our division count as isl would need it: isl names each result by an output variable, so
    one division per result (one used by that result only) is folded into the output's own
    constraints (``o = x floordiv 8`` is ``8*o <= x <= 8*o + 7``, no div). Without this
    correction ``(d0) -> (d0 floordiv 8)`` would count as "isl needs fewer divisions"."""
    uses = _division_uses(m)
    folded = 0
    for e in m.results:
        own = _division_uses(IndexingMap(m.dims, m.range_vars, m.runtime_vars, [e]))
        if any(uses[key] == count for key, count in own.items()):
            folded += 1
    return len(uses) - folded


def quality_against_isl(count: int = 200, seed: int = 1, depth: int = 3):
    """On seeded random maps: how often isl's coalesced relation needs fewer divisions than
    our simplified form, counted raw (every floordiv/mod group) and comparably (see
    :func:`comparable_divisions`)."""
    try:
        from hlo_index.affine.isl_bridge import isl_division_count
    except ImportError:
        return None
    rng = random.Random(seed)
    raw = comparable = 0
    for _ in range(count):
        m = _random_map(rng, depth).simplified()
        if m.is_known_empty or m.is_undefined:
            continue
        isl_count = isl_division_count(m)
        raw += isl_count < division_groups(m)
        comparable += isl_count < comparable_divisions(m)
    return {"maps": count, "depth": depth, "isl_fewer_divisions_raw": raw, "isl_fewer_divisions_comparable": comparable}


def _random_expr(rng, n_dims, depth):
    if depth == 0 or rng.random() < 0.25:
        return dim(rng.randrange(n_dims)) if rng.random() < 0.8 else const(rng.randint(-4, 9))
    op = rng.choice(["add", "add", "mul", "floordiv", "mod"])
    a = _random_expr(rng, n_dims, depth - 1)
    if op == "add":
        return a + _random_expr(rng, n_dims, depth - 1)
    if op == "mul":
        return a * rng.randint(-3, 8)
    divisor = rng.choice([2, 3, 4, 8, 16])
    return a.floordiv(divisor) if op == "floordiv" else a.mod(divisor)


def _random_map(rng, depth: int = 3) -> IndexingMap:
    n = rng.randint(1, 3)
    return IndexingMap.from_shape_dims(
        [rng.choice([4, 8, 10, 16, 32]) for _ in range(n)],
        [_random_expr(rng, n, depth) for _ in range(rng.randint(1, 3))],
    )


# -------------------------------------------------------------------------------- main
def main() -> int:
    spec_texts = dict(PEER_CASES)
    cases = list(spec_texts.items()) + generated_maps(100)
    per_map = {
        name_i: time_cold(text) for name_i, text in ((f"{i:03d} {name}", text) for i, (name, text) in enumerate(cases))
    }
    times = list(per_map.values())
    peers = {}
    for name, text in PEER_CASES.items():
        simplified = str(parse_map(text).simplified())
        peers[name] = {
            "seconds": time_cold(text),
            "simplified": simplified,
            "simplest_form": PEER_EXPECTED[name] in simplified,
        }
    chains = {}
    for name, build in (
        ("reshape [10,10,10]->[50,20]->[10,10,10]", chain_10_10_10),
        ("attention reshape/transpose chain", chain_attention),
    ):
        result = build()
        identity = result == IndexingMap.identity([b.hi + 1 for b in result.dims])
        chains[name] = {"seconds": time_chain(build), "identity": identity, "map": str(result)}
    quality = [q for q in (quality_against_isl(), quality_against_isl(300, 7, depth=4)) if q]
    round_trips = [parse_map(text).simplified() for name, text in cases if name.startswith("reshape ")]
    identities = sum(m == IndexingMap.identity([b.hi + 1 for b in m.dims]) for m in round_trips)
    report = {
        "reshape_round_trips": {"maps": len(round_trips), "identity": identities},
        "maps": len(times),
        "median_seconds": statistics.median(times),
        "p95_seconds": _percentile(times, 0.95),
        "max_seconds": max(times),
        "peer_cases": peers,
        "chains": chains,
        "isl_quality": quality,
        "tinygrad": tinygrad_peer() or "tinygrad not importable",
        "reference_not_measured": {
            "tinygrad_per_map_ms": [0.2, 5],
            "tinygrad_chain_ms": [4, 9],
            "inductor_per_map_ms": [3.5, 18],
        },
    }
    out = Path(__file__).parent / "results" / "simplify.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    _print_table(report)
    ok = all(p["simplest_form"] for p in peers.values()) and all(c["identity"] for c in chains.values())
    return 0 if ok else 1


def _print_table(report) -> None:
    rows = [
        (
            "fixed set",
            f"{report['maps']} maps",
            f"median {report['median_seconds'] * 1e6:.1f} us, p95 {report['p95_seconds'] * 1e6:.1f} us",
        )
    ]
    for name, peer in report["peer_cases"].items():
        rows.append((name, "simplest" if peer["simplest_form"] else "NOT simplest", f"{peer['seconds'] * 1e6:.1f} us"))
    for name, chain in report["chains"].items():
        rows.append((name, "identity" if chain["identity"] else "NOT identity", f"{chain['seconds'] * 1e3:.3f} ms"))
    trips = report["reshape_round_trips"]
    rows.append(("reshape round trips -> identity", f"{trips['identity']}/{trips['maps']}", ""))
    rows.extend(
        (
            f"isl needs fewer divisions (depth {quality['depth']})",
            f"{quality['isl_fewer_divisions_comparable']}/{quality['maps']} (raw {quality['isl_fewer_divisions_raw']})",
            "",
        )
        for quality in report["isl_quality"]
    )
    width = max(len(r[0]) for r in rows)
    print(f"{'case'.ljust(width)}  {'result'.ljust(24)}  cold time")
    for name, status, timing in rows:
        print(f"{name.ljust(width)}  {status.ljust(24)}  {timing}")
    _print_tinygrad(report)


def _print_tinygrad(report) -> None:
    peer = report["tinygrad"]
    print()
    if isinstance(peer, str):
        print(peer)
        return
    ours = {name: (p["seconds"], p["simplest_form"]) for name, p in report["peer_cases"].items()}
    ours.update({name: (c["seconds"], c["identity"]) for name, c in report["chains"].items()})
    width = max(len(name) for name in peer["cases"])
    print(f"tinygrad {peer['version']} vs ours, cold simplification (median of {RUNS})")
    print(f"{'case'.ljust(width)}  {'ours':>10}  {'tinygrad':>10}  {'ratio':>7}  ours simplest  tinygrad simplest")
    for name, tg in peer["cases"].items():
        our_seconds, our_simplest = ours[name]
        tg_status = ("yes" if tg["simplest_form"] else "NO") + (
            f" ({tg['divisions']} div/mod, simplest {tg['simplest_divisions']})" + ("" if tg["correct"] else " WRONG")
        )
        print(
            f"{name.ljust(width)}  {our_seconds * 1e6:8.1f}us  {tg['seconds'] * 1e6:8.1f}us  "
            f"{tg['seconds'] / our_seconds:6.1f}x  {('yes' if our_simplest else 'NO'):13}  "
            f"{tg_status}"
        )


if __name__ == "__main__":
    sys.exit(main())
