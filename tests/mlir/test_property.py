"""Property: on random static pairs, the verdict is ``legal`` exactly when an exhaustive search of
the other order (every reshape of the same kind and every strided slice) finds a pair computing
the same tensor; a legal rewrite computes it too."""

import itertools
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_index.mlir import analyse_mlir_text

from .helpers import check_rewrite
from .mlir_numpy import tagged


def factorisations(n: int, parts: int):
    if parts == 1:
        yield (n,)
        return
    for d in range(1, n + 1):
        if n % d == 0:
            for rest in factorisations(n // d, parts - 1):
                yield (d,) + rest


def strided(dim: int, size: int):
    """Every (offset, stride) of a slice of ``size`` elements of a ``dim``-long dim."""
    for s in range(1, dim + 1) if size > 1 else (1,):
        for o in range(dim - (size - 1) * s):
            yield o, s


def slices(dims, sizes):
    """Every strided slice of ``dims`` with the given sizes, as (offset, size, stride) per dim."""
    return itertools.product(*[[(o, n, s) for o, s in strided(d, n)] for d, n in zip(dims, sizes)])


def take(data: np.ndarray, spec) -> np.ndarray:
    return data[tuple(slice(o, o + (n - 1) * s + 1, s) for o, n, s in spec)]


def t(dims) -> str:
    return "tensor<" + "".join(f"{d}x" for d in dims) + "f32>"


def text(order, kind, x, y, z, spec) -> str:
    offs = ", ".join(str(o) for o, _, _ in spec)
    sizes = ", ".join(str(n) for _, n, _ in spec)
    strides = ", ".join(str(s) for _, _, s in spec)
    sl = lambda src, a, b: f"%s = tensor.extract_slice {src}[{offs}] [{sizes}] [{strides}] : {t(a)} to {t(b)}"  # noqa: E731
    if kind == "expand":
        small, big = (y, z) if order == "slice" else (x, y)
        group = "[[" + ", ".join(str(i) for i in range(len(big))) + "]]"
        shape = ", ".join(str(d) for d in big)
        re = lambda src: f"%r = tensor.expand_shape {src} {group} output_shape [{shape}] : {t(small)} into {t(big)}"  # noqa: E731
    else:
        big, small = (y, z) if order == "slice" else (x, y)
        group = "[[" + ", ".join(str(i) for i in range(len(big))) + "]]"
        re = lambda src: f"%r = tensor.collapse_shape {src} {group} : {t(big)} into {t(small)}"  # noqa: E731
    body = [sl("%x", x, y), re("%s")] if order == "slice" else [re("%x"), sl("%r", y, z)]
    result = "%r" if order == "slice" else "%s"
    return f"func.func @p(%x: {t(x)}) -> {t(z)} {{\n  " + "\n  ".join(body) + f"\n  return {result} : {t(z)}\n}}\n"


def exhaustive(order, kind, x, want: np.ndarray, z) -> bool:
    """Does any pair of the other order (same reshape kind, any strided slice) give ``want``?"""
    data = tagged(x)
    if order == "slice":  # reshape x first, then slice to z
        shapes = factorisations(x[0], len(z)) if kind == "expand" else [(int(np.prod(x)),)]
        src = data.reshape
        for shape in shapes:
            reshaped = src(shape)
            for spec in slices(shape, z):
                if np.array_equal(take(reshaped, spec), want):
                    return True
        return False
    # slice x first to some box, then reshape it to z
    count = int(np.prod(z))
    for sizes in factorisations(count, len(x)):
        if any(n > d for n, d in zip(sizes, x)):
            continue
        for spec in slices(x, sizes):
            if np.array_equal(take(data, spec).reshape(z), want):
                return True
    return False


@st.composite
def pairs(draw):
    order = draw(st.sampled_from(["slice", "reshape"]))
    kind = draw(st.sampled_from(["expand", "collapse"]))
    parts = draw(st.lists(st.integers(1, 4), min_size=2, max_size=3))
    if order == "slice":
        if kind == "expand":
            z = tuple(parts)
            size = int(np.prod(z))
            s = draw(st.integers(1, 3))
            o = draw(st.integers(0, 5))
            n = draw(st.integers(o + (size - 1) * s + 1, o + (size - 1) * s + 1 + 6))
            x, spec, y = (n,), [(o, size, s)], (size,)
        else:
            x, spec = [], []
            for p in parts:
                s = draw(st.integers(1, 2))
                o = draw(st.integers(0, 2))
                x.append(o + (p - 1) * s + 1 + draw(st.integers(0, 2)))
                spec.append((o, p, s))
            x, y, z = tuple(x), tuple(parts), (int(np.prod(parts)),)
    else:
        if kind == "expand":
            y = tuple(draw(st.integers(1, 4)) for _ in parts)
            x = (int(np.prod(y)),)
        else:
            x = tuple(parts)
            y = (int(np.prod(x)),)
        spec = []
        for d in y:
            n = draw(st.integers(1, d))
            s = draw(st.integers(1, max(1, (d - 1) // max(1, n - 1)) if n > 1 else 1))
            o = draw(st.integers(0, d - 1 - (n - 1) * s))
            spec.append((o, n, s))
        z = tuple(n for _, n, _ in spec)
    return order, kind, x, y, z, spec


@settings(
    max_examples=int(os.environ.get("BUBBLE_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(pairs())
def test_verdict_equals_exhaustive_search(p):
    order, kind, x, y, z, spec = p
    source = text(order, kind, x, y, z, spec)
    (chain,) = analyse_mlir_text(source)
    data = tagged(x)
    want = take(data, spec).reshape(z) if order == "slice" else take(data.reshape(y), spec)
    exists = exhaustive(order, kind, x, want, z)
    assert chain.verdict == ("legal" if exists else "illegal"), (source, chain.reason)
    if exists:
        assert check_rewrite(source, chain, lambda f: [[data]]) == 1
