"""Make the dump pairs of ``hlo-index diff``'s tests with jax on XLA:CPU (run by hand, never by the tests).

    python tests/data/diff/make_pairs.py            # needs jax; rewrites tests/data/diff/<pair>/

Each pair is one jitted program with a ``variant`` switch ("old" / "new"): the variants share
every line but the one that differs, as a change to a model does, so the metadata's op names and
source lines stay put. Each variant is compiled in a process of its own with
``XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text``; only the after-optimizations text of the
program's module is kept (gzipped above 50 kB), with this file's directory cut from the source paths
in the metadata. What each pair must show is written by hand in ``MANIFEST.json`` beside this file.
"""

from __future__ import annotations

import glob
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GZIP_ABOVE = 50_000


def _programs():
    import jax
    import jax.numpy as jnp

    def weight_transposed(x, w, variant):
        # new: the weight is stored transposed ([out, in]) and transposed back at the use
        w = w.T if variant == "new" else w
        return jnp.tanh(x @ w)

    def recomputation_added(x, variant):
        y = jnp.exp(x) * 2.0
        # new: the exp is needed again, reversed: the fusion recomputes it, reading x a second way
        return y + y[::-1] if variant == "new" else y + 1.0

    def layer_widened(x, w1, w2, variant):
        h = jax.nn.relu(x @ w1)
        return jnp.tanh(h @ w2)

    def op_added(x, w, variant):
        y = x @ w
        # new: an elementwise op after the matmul, which XLA:CPU emits as a fusion of its own
        return jnp.sin(y) + 1.0 if variant == "new" else y

    def same_program(x, ws, variant):
        for w in ws:  # identical layers: identical fusions repeated
            h = x @ w
            mean = h.mean(axis=-1, keepdims=True)
            var = ((h - mean) ** 2).mean(axis=-1, keepdims=True)
            x = jax.nn.gelu((h - mean) / jnp.sqrt(var + 1e-5))
        return x

    f32 = jnp.float32
    zeros = jnp.zeros
    return {
        "weight_transposed": (
            weight_transposed,
            {"old": (zeros((8, 16), f32), zeros((16, 32), f32)), "new": (zeros((8, 16), f32), zeros((32, 16), f32))},
        ),
        "recomputation_added": (recomputation_added, {"old": (zeros((16, 24), f32),), "new": (zeros((16, 24), f32),)}),
        "layer_widened": (
            layer_widened,
            {
                "old": (zeros((8, 16), f32), zeros((16, 32), f32), zeros((32, 8), f32)),
                "new": (zeros((8, 16), f32), zeros((16, 64), f32), zeros((64, 8), f32)),
            },
        ),
        "op_added": (
            op_added,
            {"old": (zeros((8, 16), f32), zeros((16, 32), f32)), "new": (zeros((8, 16), f32), zeros((16, 32), f32))},
        ),
        "same_program": (
            same_program,
            {
                "old": (zeros((8, 32), f32), [zeros((32, 32), f32)] * 3),
                "new": (zeros((8, 32), f32), [zeros((32, 32), f32)] * 3),
            },
        ),
    }


def compile_one(pair: str, variant: str) -> None:
    """In this process: compile ``pair``'s ``variant`` (XLA_FLAGS set by the caller)."""
    import jax

    fn, args = _programs()[pair]
    jax.block_until_ready(jax.jit(fn, static_argnames="variant")(*args[variant], variant=variant))


def _dump(pair: str, variant: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={tmp} --xla_dump_hlo_as_text", JAX_PLATFORMS="cpu")
        subprocess.run([sys.executable, __file__, "--compile", pair, variant], check=True, env=env)
        [path] = glob.glob(os.path.join(tmp, f"module_*.jit_{pair}.cpu_after_optimizations.txt"))
        with open(path, encoding="utf-8") as f:
            text = f.read()
    return text.replace(HERE + os.sep, "")


def main() -> None:
    for pair in _programs():
        out = os.path.join(HERE, pair)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        for variant in ("old", "new"):
            text = _dump(pair, variant)
            path = os.path.join(out, f"{variant}.hlo.txt")
            if len(text) > GZIP_ABOVE:
                with gzip.open(path + ".gz", "wt", encoding="utf-8") as f:
                    f.write(text)
            else:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
        sys.stderr.write(f"wrote {out}\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compile"]:
        compile_one(*sys.argv[2:4])
    else:
        main()
