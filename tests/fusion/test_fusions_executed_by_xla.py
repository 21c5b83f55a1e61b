"""Fusion maps against XLA running the fusion: every fused computation of the GPU dumps in
``tests/data/gpu`` is cut out of the module text as an ENTRY of its own and run by XLA on the
device jax has (the GPU where there is one, else the CPU), once as written and once per sampled
input element changed (a float set to NaN, an integer plus one, a predicate flipped). Every
output element that changes must read that input element by the fusion's output-to-input maps,
and must lie in that element's image under its input-to-output maps.

This is a soundness check: an output that reads an element need not change (a max that does not
pick it, a multiply by zero), so an unchanged output is no evidence either way. Runtime variables
(gather / dynamic-slice indices) are taken over their whole range. An output that differs between
two runs of the unchanged inputs (a reduction whose order varies) is not counted as changed.

The same check runs on the dumps users feed the tool, where ``../shared`` is beside the checkout:
every after-optimizations file of ``../shared/field`` that XLA:CPU can run (GPU and ROCm dumps;
TPU layouts it cannot) and of ``../shared/corpus`` (XLA:CPU), each within
``HLO_INDEX_EXECUTED_SECONDS`` (60 s by default for these; the rest of a file's fusions are
counted as not reached).

jax / jaxlib are not test dependencies: without them these tests skip. ``HLO_INDEX_EXECUTED_REPORT``
names a JSON file to which the counts per dump are written.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import re
import time

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from hlo_index.hlo import parse_module_text  # noqa: E402
from hlo_index.ops import input_to_output, output_to_input  # noqa: E402
from hlo_index.verify import runtime_as_range  # noqa: E402

DUMPS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "../data/gpu/*/*after_optimizations.txt.gz")))
SHARED = os.path.normpath(os.path.join(os.path.dirname(__file__), "../../../shared"))


def _rejected_by_xla() -> set[str]:
    """The field's dumps whose ``PROVENANCE.json`` says XLA's parser rejects them: nothing to run."""
    try:
        with open(os.path.join(SHARED, "field", "PROVENANCE.json")) as f:
            entries = json.load(f)
    except OSError:
        return set()
    return {
        os.path.join(SHARED, "field", e["file"])
        for e in entries
        if not str(e.get("xla_parser_jaxlib_0_10_2", "accepts")).startswith("accepts")
    }


SHARED_DUMPS = sorted(
    {
        path
        for pattern in (
            "field/gpu/*after_optimizations*",
            "field/other/*after_optimizations*",
            "corpus/*/*after_optimizations*",
        )
        for path in glob.glob(os.path.join(SHARED, pattern))
    }
    - _rejected_by_xla()
)
SHARED_SECONDS = 60.0  # per shared dump, unless HLO_INDEX_EXECUTED_SECONDS says otherwise
POINTS_PER_OPERAND = 6
CHANGED_CHECKED = 64  # changed outputs per point whose read sets are evaluated
MAX_ELEMENTS = 1 << 24  # per operand and per output: larger fusions are left out (counted)
MAX_IMAGE = 1 << 16  # an input element's image is enumerated only up to this many range points
# An output element's read set is enumerated too: a fusion whose maps have more points per output
# element than this is left out (a scatter's, its runtime indices over their whole range, can have
# ~10^7: gpt12's embedding gradient), and fewer changed outputs are checked per input element
# where they have many (a dot over a 50,000-word vocabulary).
MAX_READ_POINTS = 1 << 20
READ_POINTS_PER_INPUT = 1 << 18

_FLOATS = {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16"}
_INTS = {f"{k}{n}": f"{'int' if k == 's' else 'uint'}{n}" for k in "su" for n in (8, 16, 32, 64)}


def numpy_dtype(element_type: str):
    import ml_dtypes

    if element_type == "pred":
        return np.dtype(bool)
    if element_type in _INTS:
        return np.dtype(_INTS[element_type])
    name = _FLOATS.get(element_type)
    if name is None and element_type.startswith("f8"):
        name = "float8_" + element_type[2:]
    return np.dtype(getattr(ml_dtypes, name) if name == "bfloat16" or name.startswith("float8") else name)


def computation_blocks(text: str) -> dict[str, list[str]]:
    """The module's computations, by name, as their text lines (XLA's own text, not re-printed)."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if current is None:
            head = re.match(r"(?:ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$", line)
            if head and not line[:1].isspace() and not line.startswith("HloModule"):
                current = blocks.setdefault(head.group(1), [])
                current.append(line)
            continue
        current.append(line)
        if line.startswith("}"):
            current = None
    return blocks


def standalone_module(blocks: dict[str, list[str]], name: str) -> str:
    """A module whose ENTRY is computation ``name``, after the computations it calls."""
    needed, stack = [], [name]
    while stack:
        comp = stack.pop()
        if comp in needed:
            continue
        needed.append(comp)
        body = "\n".join(blocks[comp][1:])
        stack.extend(c for c in re.findall(r"%([\w.\-]+)", body) if c in blocks and c != comp)
    parts = ["HloModule fusion_check"]
    parts += ["\n".join(logical_bitcasts(lines)) for comp, lines in blocks.items() if comp in needed and comp != name]
    head = re.sub(r"^ENTRY\s+", "", blocks[name][0])
    parts.append("\n".join(["ENTRY " + head, *logical_bitcasts(blocks[name][1:])]))
    return "\n\n".join(parts) + "\n"


_DEFINITION = re.compile(
    r"^(\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*)(\w+)\[([\d,]*)\](?:\{([\d,]*)[^}]*\})?\s+([\w\-]+)\((.*)$"
)


def logical_bitcasts(lines: list[str]) -> list[str]:
    """``lines`` with each bitcast written as the logical ops it stands for (XLA's compiler takes
    bitcasts only after it has assigned layouts): a transpose of the operand into its physical
    order, a reshape, and a transpose out of the result's physical order."""
    shapes: dict[str, tuple[list[int], list[int]]] = {}
    out = []
    for line in lines:
        m = _DEFINITION.match(line)
        if m is None:
            out.append(line)
            continue
        lead, name, etype, dims_text, layout_text, opcode, rest = m.groups()
        dims = [int(d) for d in dims_text.split(",") if d]
        minor_to_major = [int(d) for d in layout_text.split(",") if d] if layout_text else list(range(len(dims)))[::-1]
        shapes[name] = (dims, minor_to_major)
        if opcode != "bitcast":
            out.append(line)
            continue
        operand = re.match(r"\s*(?:\w+\[[\d,]*\](?:\{[^}]*\})?\s+)?%?([\w.\-]+)\s*\)", rest).group(1)
        in_dims, in_m2m = shapes[operand]
        in_order, out_order = in_m2m[::-1], minor_to_major[::-1]
        physical_in = [in_dims[d] for d in in_order]
        physical_out = [dims[d] for d in out_order]
        inverse = [out_order.index(d) for d in range(len(dims))]
        ind = lead[: len(lead) - len(lead.lstrip())]
        into_order = f"transpose(%{operand}), dimensions={{{_csv(in_order)}}}"
        out.append(f"{ind}%{name}.physical = {etype}[{_csv(physical_in)}] {into_order}")
        out.append(f"{ind}%{name}.reshaped = {etype}[{_csv(physical_out)}] reshape(%{name}.physical)")
        out.append(f"{lead}{etype}[{_csv(dims)}] transpose(%{name}.reshaped), dimensions={{{_csv(inverse)}}}")
    return out


def _csv(values) -> str:
    return ",".join(str(v) for v in values)


def compile_text(text: str):
    from jax._src import xla_bridge
    from jax._src.lib import xla_client

    parse = getattr(getattr(xla_client, "hlo", None), "hlo_module_from_text", None)
    module = parse(text)
    mlir = xla_client._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    backend = xla_bridge.get_backend()
    return backend.compile_and_load(mlir, backend.devices()[:1], xla_client.CompileOptions())


def run(executable, arrays) -> list[np.ndarray]:
    results = executable.execute_sharded(arrays).disassemble_into_single_device_arrays()
    return [np.asarray(r[0]) for r in results]


def changed_outputs(base: np.ndarray, again: np.ndarray, other: np.ndarray) -> set[tuple[int, ...]]:
    """The output elements that differ between ``base`` and ``other`` and not between ``base`` and
    ``again`` (two runs of the same inputs); floats differ when NaN appears or by more than 0.1%."""
    a, b, c = (x.reshape(-1) for x in (base, again, other))
    differ = np.flatnonzero(a != c)  # NaN != NaN: settled below, on the few candidates
    a, b, c = a[differ], b[differ], c[differ]
    if a.dtype.kind in "iub":
        keep = a == b
    else:
        wide = np.complex128 if a.dtype.kind == "c" else np.float64  # a change in the imaginary part counts
        a, b, c = (x.astype(wide) for x in (a, b, c))
        appeared = np.isnan(c) & ~np.isnan(a)
        moved = np.abs(a - c) > 1e-3 * (np.abs(a) + np.abs(c)) + 1e-6
        steady = a == b
        keep = appeared | (moved & steady)
    if not base.shape:
        return {()} if keep.any() else set()
    return {tuple(int(i) for i in p) for p in zip(*np.unravel_index(differ[keep], base.shape))}


def parameters(comp) -> list:
    return [comp.parameters[n] for n in range(len(comp.parameters))]


def inputs_for(comp, rng) -> list[np.ndarray]:
    values = []
    for param in parameters(comp):
        shape, dtype = param.shape.dims, numpy_dtype(param.shape.element_type)
        # arrays even for a scalar parameter (numpy gives a scalar for shape ()), so one element can be set
        if dtype == np.dtype(bool):
            values.append(np.asarray(rng.random(shape) < 0.5))
        elif dtype.kind in "iu":
            values.append(np.asarray(rng.integers(0, 4, size=shape), dtype=dtype))
        else:
            values.append(np.asarray(rng.uniform(0.5, 2.0, size=shape), dtype=dtype))
    return values


def changed_input(values: np.ndarray, point) -> np.ndarray:
    out = values.copy()
    if out.dtype == np.dtype(bool):
        out[point] = not out[point]
    elif out.dtype.kind in "iu":
        out[point] = out[point] + 1
    else:
        out[point] = np.nan
    return out


def sample_points(dims, rng):
    size = int(np.prod(dims, dtype=np.int64))
    flat = {0, size - 1} | {int(k) for k in rng.integers(0, size, POINTS_PER_OPERAND - 2)}
    return [tuple(int(i) for i in np.unravel_index(k, dims)) for k in sorted(flat)]


def enumeration_size(m) -> int:
    return int(np.prod([iv.size for iv in m.range_vars], dtype=np.float64))


def structure_key(lines: list[str]) -> str:
    """The computation's text without names and metadata: equal for fusions XLA emits alike."""
    body = "\n".join(re.sub(r",?\s*metadata=\{[^}]*\}", "", line) for line in lines[1:])
    return re.sub(r"%[\w.\-]+", "%", body)


def why_left_out(fusion) -> str | None:
    comp = fusion.called["calls"]
    if any(i.opcode in ("fusion", "custom-call") for i in comp.instructions):
        return "calls another fusion or a custom-call"
    shapes = [p.shape for p in parameters(comp)] + [comp.root.shape]
    if any(s.is_tuple for s in shapes[:-1]):
        return "a tuple-shaped parameter"
    leaves = [comp.root.shape.leaf(k) for k in range(comp.root.shape.num_outputs)]
    if any(s.num_elements > MAX_ELEMENTS or not s.num_elements for s in [*shapes[:-1], *leaves]):
        return "an operand or output larger than the check's limit, or empty"
    return None


def check_fusion(fusion, blocks, rng) -> dict:
    comp = fusion.called["calls"]
    outputs = comp.root.shape.num_outputs
    out2in = [{row.operand: row.maps for row in output_to_input(fusion, k)} for k in range(outputs)]
    in2out = [input_to_output(fusion, n) for n in range(len(comp.parameters))]
    every = [m for rows in out2in for maps in rows.values() for m in maps] + [
        m for per_output in in2out for maps in per_output for m in maps
    ]
    if any(m.is_undefined for m in every):
        return {"left_out": "a map is unknown"}
    reads = [{n: [runtime_as_range(m) for m in maps] for n, maps in rows.items()} for rows in out2in]
    largest = max((enumeration_size(m) for rows in reads for maps in rows.values() for m in maps), default=1)
    if largest > MAX_READ_POINTS:
        return {"left_out": f"a map with more than {MAX_READ_POINTS} points per output element"}
    changed_checked = min(CHANGED_CHECKED, max(1, READ_POINTS_PER_INPUT // max(largest, 1)))
    executable = compile_text(standalone_module(blocks, comp.name))
    values = inputs_for(comp, rng)
    arrays = [jax.device_put(v) for v in values]
    base, again = run(executable, arrays), run(executable, arrays)
    pairs = points = images_checked = 0
    for n, param in enumerate(parameters(comp)):
        for x in sample_points(param.shape.dims, rng):
            marked = list(arrays)
            marked[n] = jax.device_put(changed_input(values[n], x))
            got = run(executable, marked)
            points += 1
            for k in range(outputs):
                where = changed_outputs(base[k], again[k], got[k])
                if not where:
                    continue
                images = [runtime_as_range(m) for m in in2out[n][k]]
                if all(enumeration_size(m) <= MAX_IMAGE for m in images):
                    image = set().union(*(m.read_set(x) for m in images))
                    outside = where - image
                    assert not outside, (fusion.name, n, x, k, "input-to-output misses", sorted(outside)[:4])
                    images_checked += 1
                for y in sorted(where)[:changed_checked]:
                    read = set()
                    for m in reads[k].get(n, ()):
                        read |= m.read_set(y)
                    assert x in read, (fusion.name, n, x, k, y, "output-to-input misses the changed input")
                    pairs += 1
    return {"points": points, "pairs": pairs, "images": images_checked}


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: os.path.basename(os.path.dirname(p)))
def test_fusions_sound_when_executed(path):
    counts = check_dump(path, float(os.environ.get("HLO_INDEX_EXECUTED_SECONDS", "inf")))
    # a run that checked few distinct fusions, or saw no output change, has tested nothing
    assert counts["checked"] >= 10, counts
    assert counts["with_changes"] >= counts["checked"] * 9 // 10, counts


@pytest.mark.skipif(not SHARED_DUMPS, reason="../shared is not beside this checkout")
@pytest.mark.parametrize("path", SHARED_DUMPS, ids=os.path.basename)
def test_shared_dumps_fusions_sound_when_executed(path):
    counts = check_dump(path, float(os.environ.get("HLO_INDEX_EXECUTED_SECONDS", SHARED_SECONDS)))
    # every fusion within the limits is checked unless the time ran out; small CPU dumps have few
    # distinct fusions, and in some (a sort, an argsort) one changed input element changes no output
    if counts["left_out"].get("not reached within HLO_INDEX_EXECUTED_SECONDS"):
        assert counts["checked"] >= 10, counts
    assert counts["checked"] == 0 or counts["with_changes"] >= 1, counts


def check_dump(path: str, budget: float) -> dict:
    """Every fusion of the dump at ``path`` checked (``check_fusion``) until ``budget`` seconds
    have passed; the counts, also written to ``HLO_INDEX_EXECUTED_REPORT`` when it is set."""
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        text = f.read()
    module = parse_module_text(text, path)
    blocks = computation_blocks(text)
    with _x64():
        counts = _check_fusions(module, blocks, budget)
    report = os.environ.get("HLO_INDEX_EXECUTED_REPORT")
    if report:
        done = {}
        if os.path.exists(report):
            with open(report) as f:
                done = json.load(f)
        done[os.path.basename(os.path.dirname(path)) + "/" + os.path.basename(path)] = dict(
            counts, backend=jax.default_backend()
        )
        with open(report, "w") as f:
            json.dump(done, f, indent=1)
    return counts


def _check_fusions(module, blocks: dict, budget: float) -> dict:
    rng = np.random.default_rng(0)
    counts = {"fusions": 0, "checked": 0, "with_changes": 0, "points": 0, "pairs": 0, "images": 0, "left_out": {}}
    started, seen = time.perf_counter(), set()
    for fusion in module.fusions:
        counts["fusions"] += 1
        key = structure_key(blocks[fusion.called["calls"].name])
        reason = why_left_out(fusion)
        if reason is None and key in seen:
            reason = "the same fused computation as one checked"
        elif reason is None and time.perf_counter() - started > budget:
            reason = "not reached within HLO_INDEX_EXECUTED_SECONDS"
        result = {"left_out": reason} if reason else check_fusion(fusion, blocks, rng)
        seen.add(key)
        if "left_out" in result:
            counts["left_out"][result["left_out"]] = counts["left_out"].get(result["left_out"], 0) + 1
            continue
        counts["checked"] += 1
        counts["with_changes"] += result["pairs"] > 0
        counts["points"] += result["points"]
        counts["pairs"] += result["pairs"]
        counts["images"] += result["images"]
    return counts


def _x64():
    """jax with 64-bit types while the dumps' fusions run (an s64 parameter takes an int64 array),
    as the installed jax names the switch."""
    enable = getattr(jax, "enable_x64", None)
    if enable is None:
        from jax.experimental import enable_x64 as enable
    return enable(True)
