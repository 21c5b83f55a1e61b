"""XLA:CPU's own ``HloCostAnalysis`` module totals, recorded (run by hand with jax, never by the tests).

    python tests/data/xla_cpu_cost/record.py [SHARED]

For each probe in ``PROBES`` (a small module with one op or one costing rule of XLA's) and each
module of ``SHARED`` (default ``../shared``) that XLA's parser reads: the conformance modules its
parser accepts (``conformance/xla_hlo/MANIFEST.tsv``), the after-optimizations dumps of ``corpus``
and the dumps of ``field`` but their before-optimizations modules. ``totals.json`` beside this file
gets, per name, ``[flops, transcendentals, bytes accessed]`` as jaxlib's
``hlo_module_cost_analysis(cpu_client, hlo_module_from_text(text))`` gives them, and the jaxlib
version; ``tests/analyses/test_cost_vs_xla_figures.py`` checks hlo-index's ``cost_totals`` against
every entry. A module XLA cannot cost is left out.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "..", "shared"))


def _module(body: str, extra: str = "") -> str:
    return f"HloModule probe\n{extra}\nENTRY main {{\n{body}\n}}\n"


_UNARY = [
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atanh",
    "cbrt",
    "ceil",
    "cosine",
    "cosh",
    "erf",
    "exponential",
    "exponential-minus-one",
    "floor",
    "log",
    "log-plus-one",
    "logistic",
    "negate",
    "round-nearest-afz",
    "round-nearest-even",
    "rsqrt",
    "sign",
    "sine",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
]
_BINARY = ["add", "atan2", "divide", "maximum", "minimum", "multiply", "power", "remainder", "subtract"]
_INTEGER_BINARY = ["and", "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical", "mulhi"]

PROBES: dict[str, str] = {
    **{f"unary_{op}": _module(f"  a = f32[64]{{0}} parameter(0)\n  ROOT r = f32[64]{{0}} {op}(a)") for op in _UNARY},
    **{
        f"binary_{op}": _module(
            f"  a = f32[64]{{0}} parameter(0)\n  b = f32[64]{{0}} parameter(1)\n  ROOT r = f32[64]{{0}} {op}(a, b)"
        )
        for op in _BINARY
    },
    **{
        f"integer_{op}": _module(
            f"  a = s32[64]{{0}} parameter(0)\n  b = s32[64]{{0}} parameter(1)\n  ROOT r = s32[64]{{0}} {op}(a, b)"
        )
        for op in _INTEGER_BINARY
    },
    "count_leading_zeros": _module("  a = s32[64]{0} parameter(0)\n  ROOT r = s32[64]{0} count-leading-zeros(a)"),
    # a ragged dot, non-contracting mode: one group dimension, deleted from the result by step
    "ragged_dot_non_contracting": _module(
        "  a = f32[6,4]{1,0} parameter(0)\n  b = f32[3,4,5]{2,1,0} parameter(1)\n  g = s64[3]{0} parameter(2)\n"
        "  ROOT r = f32[6,5]{1,0} ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1},"
        " lhs_ragged_dims={0}, rhs_group_dims={0}"
    ),
    # contracting mode: no group dimension, the result's group dimension counted
    "ragged_dot_contracting": _module(
        "  a = f32[11,5]{1,0} parameter(0)\n  b = f32[5,7]{1,0} parameter(1)\n  g = s64[3]{0} parameter(2)\n"
        "  ROOT r = f32[3,11,7]{2,1,0} ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={0},"
        " lhs_ragged_dims={1}"
    ),
    "scaled_dot": _module(
        "  a = f8e4m3fn[16,128]{1,0} parameter(0)\n  b = f8e5m2[32,128]{1,0} parameter(1)\n"
        "  sa = f8e8m0fnu[16,4]{1,0} parameter(2)\n  sb = f8e8m0fnu[32,4]{1,0} parameter(3)\n"
        "  ROOT r = f32[16,32]{1,0} scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={1}"
    ),
    # a custom fusion holding a gather costs as the gather alone (TPU dumps write them so)
    "custom_fusion_gather": _module(
        "  p = f32[32,64]{1,0} parameter(0)\n  i = s32[32]{0} parameter(1)\n"
        "  ROOT f = f32[32]{0} fusion(p, i), kind=kCustom, calls=gathered",
        "gathered {\n  p = f32[32,64]{1,0} parameter(0)\n  i = s32[32]{0} parameter(1)\n"
        "  n = s32[32]{0} negate(i)\n  r = s32[32,1]{1,0} reshape(n)\n"
        "  ROOT g = f32[32]{0} gather(p, r), offset_dims={}, collapsed_slice_dims={0,1},"
        " start_index_map={1}, index_vector_dim=1, slice_sizes={1,1}\n}\n",
    ),
    "custom_fusion_scatter": _module(
        "  p = f32[1000,64]{1,0} parameter(0)\n  i = s32[32,1]{1,0} parameter(1)\n  u = f32[32,64]{1,0} parameter(2)\n"
        "  ROOT f = f32[1000,64]{1,0} fusion(p, i, u), kind=kCustom, calls=scattered",
        "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
        "scattered {\n  p = f32[1000,64]{1,0} parameter(0)\n  i = s32[32,1]{1,0} parameter(1)\n"
        "  u = f32[32,64]{1,0} parameter(2)\n  e = f32[32,64]{1,0} exponential(u)\n"
        "  ROOT s = f32[1000,64]{1,0} scatter(p, i, e), update_window_dims={1}, inserted_window_dims={0},"
        " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n",
    ),
    "dynamic_reshape": _module("  a = f32[<=5]{0} parameter(0)\n  ROOT r = f32[1,<=5]{1,0} reshape(a)"),
    "unbounded_abs": _module("  a = f32[?,784]{1,0} parameter(0)\n  ROOT r = f32[?,784]{1,0} abs(a)"),
    "outfeed_tuple": _module(
        "  tok = token[] after-all()\n  a = s32[3]{0} parameter(0)\n  t = (s32[3]{0}) tuple(a)\n"
        "  ROOT o = token[] outfeed(t, tok), outfeed_shape=(s32[3]{0})"
    ),
    "send_recv": _module(
        "  tok = token[] after-all()\n  a = f32[128,32]{1,0} parameter(0)\n"
        "  s = (f32[128,32]{1,0}, u32[], token[]) send(a, tok), channel_id=5, is_host_transfer=true\n"
        "  sd = token[] send-done(s), channel_id=5, is_host_transfer=true\n"
        "  r = (f32[128,32]{1,0}, u32[], token[]) recv(tok), channel_id=6, is_host_transfer=true\n"
        "  rd = (f32[128,32]{1,0}, token[]) recv-done(r), channel_id=6, is_host_transfer=true\n"
        "  ROOT t = (token[], (f32[128,32]{1,0}, token[])) tuple(sd, rd)"
    ),
    # a transpose that moves a size-1 dimension: a copy to XLA's cost analysis
    "transpose_of_a_unit_dimension": _module(
        "  a = f32[64,128,1]{2,1,0} parameter(0)\n  ROOT r = f32[64,1,128]{2,1,0} transpose(a), dimensions={0,2,1}"
    ),
    "transpose_bitcast": _module(
        "  a = f32[64,128]{1,0} parameter(0)\n  ROOT r = f32[128,64]{0,1} transpose(a), dimensions={1,0}"
    ),
    # a parameter read through a nested fusion that a dynamic-slice cuts
    "nested_fusion_sliced": _module(
        "  a = s8[2,6144,2,256]{3,2,1,0} parameter(0)\n  i = s32[] parameter(1)\n"
        "  ROOT f = s8[2,384,2,256]{3,2,1,0} fusion(a, i), kind=kLoop, calls=outer",
        "copied {\n  x = s8[2,6144,2,256]{3,2,1,0} parameter(0)\n  ROOT c = s8[2,6144,2,256]{3,2,1,0} copy(x)\n}\n"
        "outer {\n  p = s8[2,6144,2,256]{3,2,1,0} parameter(0)\n"
        "  n = s8[2,6144,2,256]{3,2,1,0} fusion(p), kind=kLoop, calls=copied\n"
        "  z = s32[] constant(0)\n  i = s32[] parameter(1)\n"
        "  ROOT d = s8[2,384,2,256]{3,2,1,0} dynamic-slice(n, z, i, z, z), dynamic_slice_sizes={2,384,2,256}\n}\n",
    ),
    # a tuple parameter one of whose elements no get-tuple-element takes
    "tuple_parameter_half_read": _module(
        "  p = (f32[2,2]{1,0}, f32[42,2,3]{2,1,0}) parameter(0)\n  q = f32[123,4]{1,0} parameter(1)\n"
        "  ROOT f = (f32[123,4]{1,0}, f32[2,2]{1,0}) fusion(p, q), kind=kLoop, calls=fused",
        "fused {\n  q = f32[123,4]{1,0} parameter(1)\n  p = (f32[2,2]{1,0}, f32[42,2,3]{2,1,0}) parameter(0)\n"
        "  e = f32[2,2]{1,0} get-tuple-element(p), index=0\n"
        "  ROOT t = (f32[123,4]{1,0}, f32[2,2]{1,0}) tuple(q, e)\n}\n",
    ),
}


def modules(shared: str) -> list[tuple[str, str]]:
    """(key, path) of every module recorded: the key is the path below ``shared``."""
    out = []
    manifest = os.path.join(shared, "conformance", "xla_hlo", "MANIFEST.tsv")
    if os.path.exists(manifest):
        with open(manifest) as f:
            rows = [line.rstrip("\n").split("\t") for line in f][1:]
        out += [(os.path.join("conformance", "xla_hlo", r[0]), "") for r in rows if len(r) > 5 and r[5] == "valid"]
    for top in ("corpus", "field"):
        for root, _, names in os.walk(os.path.join(shared, top)):
            for name in names:
                if not (name.endswith((".hlo", ".txt", ".gz")) and "before_optimizations" not in name):
                    continue
                if top == "corpus" and "after_optimizations" not in name:
                    continue
                full = os.path.join(root, name)
                out.append((os.path.relpath(full, shared), ""))
    return sorted((key, os.path.join(shared, key)) for key, _ in out)


def main(shared: str) -> None:
    import jaxlib

    # XLA's totals and the reading of a dump, as the benchmark of the same figures has them
    sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "benchmarks"))
    from cost_vs_xla import read, xla_cpu_totals

    def totals(text: str) -> list[float] | None:
        try:
            got = xla_cpu_totals(text)
        except Exception:  # noqa: BLE001  a module XLA cannot cost is left out
            return None
        return [got["flops"], got["transcendentals"], got["bytes_accessed"]]

    result: dict = {"jaxlib": jaxlib.__version__, "probes": {}, "modules": {}}
    for name, text in PROBES.items():
        figures = totals(text)
        if figures is None:
            raise SystemExit(f"XLA cannot cost probe {name}")
        result["probes"][name] = figures
    for key, path in modules(shared):
        figures = totals(read(path))
        if figures is not None:
            result["modules"][key] = figures
    with open(os.path.join(HERE, "totals.json"), "w") as f:
        json.dump(result, f, indent=0, sort_keys=True)
        f.write("\n")
    sys.stderr.write(f"{len(result['probes'])} probes, {len(result['modules'])} modules\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else SHARED)
