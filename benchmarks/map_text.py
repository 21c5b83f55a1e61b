"""Map text: reading speed, and parse + simplify from text against tinygrad's build + simplify.

1. Long maps: reshape / transpose chains written out by text substitution (each step's results
   pasted into the next, as a person or a tool printing an unsimplified composition would), read
   cold (``clear_caches()`` before each run) by ``parse_map`` (the fast reader) and by the careful
   parser it falls back to (the exact, slower reader), in the same run: speed-up and us/char.
2. Peer cases, each from its natural input, cold, median of RUNS, both measured in this run:
   ours = ``parse_map(text)`` of each map (for a chain: of each step) + compose + ``simplified()``;
   tinygrad = build the UOps from Python expressions (``Variable``s, ``//``, ``%``) +
   ``simplify()``, with its divmod memo cleared and last run's UOps collected (see
   ``simplify.tinygrad_peer`` for what cold means there). Ratio = tinygrad / ours; geometric
   mean over the cases. tinygrad is never a dependency: when it is not importable, the figure
   is printed as "not measured" with the reason.
Writes ``benchmarks/results/map_text.json``.
"""

from __future__ import annotations

import gc
import json
import math
import random
import re
import statistics
import sys
import time
from pathlib import Path

from hlo_index.affine import clear_caches, parse_map
from hlo_index.affine.text import _parse_map_carefully, format_expr

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import simplify as peers  # noqa: E402  (same folder: the map builders and the peer cases)

RUNS = 15
# CPU time of this thread (both sides run in it; other threads, e.g. BLAS workers, do not count):
# wall time on a shared machine counts
# whatever else ran meanwhile, which at ~100 us per run swamps the figure.
CLOCK = time.thread_time

ATTENTION_STEPS = [
    ("reshape", [8, 128, 12, 64], [8, 128, 768]),
    ("transpose", [8, 128, 768], (1, 0, 2)),
    ("reshape", [128, 8, 768], [1024, 768]),
    ("reshape", [1024, 768], [128, 8, 768]),
    ("transpose", [128, 8, 768], (1, 0, 2)),
    ("reshape", [8, 128, 768], [8, 128, 12, 64]),
]
CHAIN_10_STEPS = [("reshape", [10, 10, 10], [50, 20]), ("reshape", [50, 20], [10, 10, 10])]


def _step_map(step):
    kind, shape, other = step
    return peers.reshape(shape, other) if kind == "reshape" else peers.transpose(shape, other)


def _substituted_text(steps) -> str:
    """The chain's map written out by pasting each step's result text into the previous one's."""
    maps = [_step_map(s) for s in steps]
    results = [format_expr(e) for e in maps[0].results]
    for m in maps[1:]:
        inner = [format_expr(e) for e in m.results]
        results = [re.sub(r"\bd(\d+)\b", lambda g, inner=inner: f"({inner[int(g.group(1))]})", r) for r in results]
    last = maps[-1]
    header = "(" + ", ".join(f"d{i}" for i in range(last.num_dims)) + ")"
    domain = ", ".join(f"d{i} in [{b.lo}, {b.hi}]" for i, b in enumerate(last.dims))
    return f"{header} -> ({', '.join(results)}), domain: {domain}"


class _CollectorPaused:
    def __enter__(self):
        gc.collect()
        gc.disable()

    def __exit__(self, *exc):
        gc.enable()
        gc.collect()


def _cold_median(fn, runs: int = RUNS) -> float:
    samples = []
    for _ in range(runs):
        clear_caches()
        start = CLOCK()
        fn()
        samples.append(CLOCK() - start)
    return statistics.median(samples)


def long_maps() -> list[dict]:
    texts = {
        "attention chain, substituted": _substituted_text(ATTENTION_STEPS),
        "attention chain twice, substituted": _substituted_text(ATTENTION_STEPS * 2),
        "[10,10,10] chain x4, substituted": _substituted_text(CHAIN_10_STEPS * 4),
    }
    rows = []
    for name, text in texts.items():
        assert parse_map(text) == _parse_map_carefully(text)
        fast, careful = [], []
        for _ in range(RUNS):  # interleaved, so that load on the machine hits both alike
            fast.append(_cold_median(lambda text=text: parse_map(text), 1))
            careful.append(_cold_median(lambda text=text: _parse_map_carefully(text), 1))
        fast_s, careful_s = statistics.median(fast), statistics.median(careful)
        rows.append(
            {
                "case": name,
                "chars": len(text),
                "parse_map_s": fast_s,
                "careful_parser_s": careful_s,
                "speedup": careful_s / fast_s,
                "parse_map_us_per_char": fast_s / len(text) * 1e6,
                "careful_us_per_char": careful_s / len(text) * 1e6,
            }
        )
    return rows


# --------------------------------------------------------------------------- peer cases
def _ours_map(text):
    return lambda: parse_map(text).simplified()


def _ours_chain(steps):
    texts = [str(_step_map(s)) for s in steps]

    def run():
        m = parse_map(texts[0])
        for text in texts[1:]:
            m = m.compose(parse_map(text))
        return m.simplified()

    return run


def _index_reshape(in_shape, out_shape, idx):
    """Input index of ``reshape(in_shape -> out_shape)`` at output index ``idx`` (same formulas
    as ``simplify.reshape``), on ints or tinygrad UOps alike."""
    linear = 0
    for i, stride in enumerate(peers._strides(out_shape)):
        linear = linear + idx[i] * stride
    out = []
    for j, (n, stride) in enumerate(zip(in_shape, peers._strides(in_shape))):
        e = linear // stride
        out.append(e % n if j > 0 else e)
    return out


def _index_chain(steps, idx):
    for kind, shape, other in reversed(steps):
        if kind == "reshape":
            idx = _index_reshape(shape, other, idx)
        else:
            permuted = [None] * len(other)
            for i, p in enumerate(other):
                permuted[p] = idx[i]
            idx = permuted
    return idx


def _chain_bounds(steps):
    kind, shape, other = steps[-1]
    out_shape = other if kind == "reshape" else [shape[p] for p in other]
    return {f"d{i}": (0, n - 1) for i, n in enumerate(out_shape)}


PEER_CHAINS = {
    "reshape [10,10,10]->[50,20]->[10,10,10]": CHAIN_10_STEPS,
    "attention reshape/transpose chain": ATTENTION_STEPS,
}


def peer_cases():
    """name -> (our timed function, tinygrad bounds, tinygrad builder)."""
    cases = {}
    for name, text in peers.PEER_CASES.items():
        bounds, make, _ = peers.TINYGRAD_CASES[name]
        cases[name] = (_ours_map(text), bounds, make)
    for name, steps in PEER_CHAINS.items():
        cases[name] = (_ours_chain(steps), _chain_bounds(steps), lambda *v, steps=steps: _index_chain(steps, list(v)))
    return cases


def _tinygrad():
    try:
        import tinygrad
        from tinygrad import Variable
        from tinygrad.uop import divandmod
        from tinygrad.uop.ops import UOp
    except Exception as e:  # noqa: BLE001  never a dependency: any failure means not measured, and why
        return None, f"tinygrad not importable ({type(e).__name__}: {e})"
    version = getattr(tinygrad, "__version__", None) or peers._dist_version("tinygrad")

    def run(bounds, make, tag: str = ""):
        """One cold build + simplify. Cold without a collection right before the timing (which
        would leave the processor's caches cold as well, a cost neither side has in a real loop):
        its divmod memo is cleared, and its UOp cache (structural, weak) cannot hit, since every
        run's variables get names no earlier run used (``tag``)."""
        divandmod.fold_divmod_general.cache_clear()
        start = CLOCK()
        variables = [Variable(f"{n}{tag}", lo, hi) for n, (lo, hi) in bounds.items()]
        result = UOp.sink(*make(*variables)).simplify()
        return CLOCK() - start, result

    return (run, version), None


def _correct(result, bounds, make, samples: int = 300, tag: str = "") -> bool:
    names = [f"{n}{tag}" for n in bounds]
    rng = random.Random(0)
    points = [[rng.randint(lo, hi) for lo, hi in bounds.values()] for _ in range(samples)]
    return all([e.sym_infer(dict(zip(names, p))) for e in result.src] == make(*p) for p in points)


def peer_comparison() -> dict:
    tg, reason = _tinygrad()
    rows = []
    for name, (ours_fn, bounds, make) in peer_cases().items():
        ours_fn()  # warm-up of imports and code paths, not of caches (cleared before each run)
        ours_samples, tg_samples = [], []
        result = None
        if tg:
            tg[0](bounds, make)  # tinygrad's one-time pattern compilation, untimed
        # Each side's runs one after the other, the collector paused (a collection triggered by
        # the other side's garbage would land in either figure), every run from empty memo tables,
        # timed in this thread's CPU seconds so that load on the machine enters neither figure.
        with _CollectorPaused():
            ours_samples = [_cold_median(ours_fn, 1) for _ in range(RUNS)]
        with _CollectorPaused():
            for i in range(RUNS if tg else 0):
                seconds, result = tg[0](bounds, make, f"_{i}")
                tg_samples.append(seconds)
        row = {"case": name, "ours_s": statistics.median(ours_samples)}
        if tg:
            row.update(
                tinygrad_s=statistics.median(tg_samples),
                tinygrad_correct_on_samples=_correct(result, bounds, make, tag=f"_{RUNS - 1}"),
            )
            row["ratio"] = row["tinygrad_s"] / row["ours_s"]
        rows.append(row)
    out = {"cases": rows, "runs": RUNS}
    if tg:
        out["tinygrad_version"] = tg[1]
        out["geometric_mean_ratio"] = math.exp(statistics.fmean(math.log(r["ratio"]) for r in rows))
    else:
        out["tinygrad"] = f"not measured: {reason}"
    return out


def main() -> int:
    report = {"long_maps": long_maps(), "peer": peer_comparison()}
    out = HERE / "results" / "map_text.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"long maps, cold, median of {RUNS} (careful parser: the exact, slower reader)")
    for r in report["long_maps"]:
        print(
            f"  {r['case']:<38} {r['chars']:>6} chars  parse_map {r['parse_map_s'] * 1e3:7.3f} ms"
            f" ({r['parse_map_us_per_char']:.3f} us/char)  careful {r['careful_parser_s'] * 1e3:7.3f}"
            f" ms  speed-up {r['speedup']:.1f}x"
        )
    peer = report["peer"]
    print(f"peer cases, cold: ours parse+simplify from text vs tinygrad build+simplify (median of {RUNS}, same run)")
    for r in peer["cases"]:
        tg = (
            f"tinygrad {r['tinygrad_s'] * 1e6:9.1f} us  ratio {r['ratio']:6.1f}x"
            f"{'' if r['tinygrad_correct_on_samples'] else '  tinygrad WRONG'}"
            if "ratio" in r
            else "tinygrad not measured"
        )
        print(f"  {r['case']:<42} ours {r['ours_s'] * 1e6:8.1f} us  {tg}")
    if "geometric_mean_ratio" in peer:
        print(
            f"  geometric mean ratio (tinygrad {peer['tinygrad_version']} / ours): "
            f"{peer['geometric_mean_ratio']:.1f}x   (goal >= 20x)"
        )
    else:
        print(f"  ratio: {peer['tinygrad']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
