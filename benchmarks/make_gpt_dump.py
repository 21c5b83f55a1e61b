"""Dump XLA's HLO for a GPT training step of N layers (the gpt24 input of the benchmarks).

    $HLO_INDEX_BENCH_XLA_PYTHON benchmarks/make_gpt_dump.py --layers 24 --out benchmarks/results

writes ``OUT/gpt<N>_train/gpt<N>_train_step.{after,before}_optimizations.hlo.txt.gz``. Any
python with jax importable will do (jax is never a dependency of hlo-index; the corpus dumps
were made with jax / jaxlib 0.10.2: ``pip install jax==0.10.2 jaxlib==0.10.2`` into a separate
venv). XLA dumps the modules itself while compiling on the CPU (``--xla_dump_to``).

The model follows what ../shared/corpus/gpt12_train shows (its ENTRY parameters, op names and
function names; the script that made it is not here): batch 4, sequence 128, vocabulary 4096,
d_model 256, 8 heads of 32, MLP 1024, learned position embedding plus RoPE on q and k, pre-
LayerNorm blocks, causal softmax attention, tanh GELU, final LayerNorm, logits tied to the
token embedding, next-token cross entropy, ``jax.value_and_grad`` and an SGD update of the
params pytree, all in one jitted function named ``gpt<N>_train_step``.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
SHARED_CORPUS = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "corpus"))

BATCH, SEQ, VOCAB = 4, 128, 4096
D_MODEL, HEADS, MLP = 256, 8, 1024
LR = 3e-4


def dump_path(layers: int, stage: str = "after_optimizations") -> str | None:
    """The gpt<layers> dump the benchmarks read: under ../shared/corpus if there is one, else the
    one this script wrote into benchmarks/results; None when neither exists."""
    rel = os.path.join(f"gpt{layers}_train", f"gpt{layers}_train_step.{stage}.hlo.txt.gz")
    for root in (SHARED_CORPUS, RESULTS):
        if os.path.isfile(os.path.join(root, rel)):
            return os.path.join(root, rel)
    return None


def how_to_make(layers: int) -> str:
    """What the benchmarks print when the gpt<layers> dump is missing."""
    return (
        f"no gpt{layers} dump under {SHARED_CORPUS} or {RESULTS}; make it with "
        f"`$HLO_INDEX_BENCH_XLA_PYTHON benchmarks/make_gpt_dump.py --layers {layers} --out "
        f"benchmarks/results` (or any python with jax 0.10.2)"
    )


def _model(jax, jnp):
    """The functions of the training step (names as in the gpt12 dump's FunctionNames)."""

    def layer_norm(x, g, b, eps=1e-5):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mu), axis=-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + eps) * g + b

    def rope(x, pos):  # x: [batch, seq, heads, head_dim]
        half = x.shape[-1] // 2
        freqs = 1.0 / (10000.0 ** (jnp.arange(half, dtype=jnp.float32) / half))
        angles = pos.astype(jnp.float32)[:, None] * freqs[None, :]
        cos = jnp.cos(angles)[None, :, None, :]
        sin = jnp.sin(angles)[None, :, None, :]
        x1, x2 = x[..., :half], x[..., half:]
        return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)

    def attention(x, b):
        bsz, t, d = x.shape
        qkv = jnp.einsum("btd,de->bte", x, b["wqkv"])
        q, k, v = jnp.split(qkv, 3, axis=-1)
        q = q.reshape(bsz, t, HEADS, d // HEADS)
        k = k.reshape(bsz, t, HEADS, d // HEADS)
        v = v.reshape(bsz, t, HEADS, d // HEADS)
        pos = jnp.arange(t)
        q, k = rope(q, pos), rope(k, pos)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / (d // HEADS) ** 0.5
        mask = jnp.tril(jnp.ones((t, t), dtype=bool))[None, None]
        scores = jnp.where(mask, scores, jnp.finfo(scores.dtype).min)
        probs = jax.nn.softmax(scores, axis=-1)
        out = jnp.einsum("bhqk,bkhd->bqhd", probs, v).reshape(bsz, t, d)
        return jnp.einsum("btd,de->bte", out, b["wo"])

    def block(x, b):
        x = x + attention(layer_norm(x, b["ln1_g"], b["ln1_b"]), b)
        h = layer_norm(x, b["ln2_g"], b["ln2_b"])
        h = jax.nn.gelu(jnp.einsum("btd,df->btf", h, b["w1"]) + b["b1"], approximate=True)
        return x + jnp.einsum("btf,fd->btd", h, b["w2"]) + b["b2"]

    def xent(logits, targets):
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    def gpt_loss(p, tokens):
        t = tokens.shape[1]
        x = p["wte"][tokens] + p["wpe"][None, :t]
        for b in p["blocks"]:
            x = block(x, b)
        x = layer_norm(x, p["lnf_g"], p["lnf_b"])
        logits = jnp.einsum("btd,vd->btv", x, p["wte"])
        return xent(logits[:, :-1].reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))

    def gpt_train_step(p, tokens):
        loss, grads = jax.value_and_grad(gpt_loss)(p, tokens)
        p = jax.tree_util.tree_map(lambda w, g: w - LR * g, p, grads)
        return p, loss

    return gpt_train_step


def _params(jax, jnp, layers: int):
    keys = iter(jax.random.split(jax.random.PRNGKey(0), 4 * layers + 2))

    def dense(shape):
        return jax.random.normal(next(keys), shape, jnp.float32) * 0.02

    blocks = [
        {
            "ln1_g": jnp.ones(D_MODEL),
            "ln1_b": jnp.zeros(D_MODEL),
            "wqkv": dense((D_MODEL, 3 * D_MODEL)),
            "wo": dense((D_MODEL, D_MODEL)),
            "ln2_g": jnp.ones(D_MODEL),
            "ln2_b": jnp.zeros(D_MODEL),
            "w1": dense((D_MODEL, MLP)),
            "b1": jnp.zeros(MLP),
            "w2": dense((MLP, D_MODEL)),
            "b2": jnp.zeros(D_MODEL),
        }
        for _ in range(layers)
    ]
    return {
        "wte": dense((VOCAB, D_MODEL)),
        "wpe": dense((SEQ, D_MODEL)),
        "blocks": blocks,
        "lnf_g": jnp.ones(D_MODEL),
        "lnf_b": jnp.zeros(D_MODEL),
    }


def _copy_gz(src: str, dst: str) -> None:
    with open(src, "rb") as fin, gzip.open(dst, "wb") as fout:
        shutil.copyfileobj(fin, fout)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=24, help="transformer blocks (default 24)")
    ap.add_argument("--out", default=RESULTS, help="directory that receives gpt<N>_train/ (default benchmarks/results)")
    args = ap.parse_args(argv)
    name = f"gpt{args.layers}"
    with tempfile.TemporaryDirectory(prefix=f"{name}_dump_") as dump:
        # XLA reads its flags once, when jax's backend starts: set them before importing jax.
        os.environ["XLA_FLAGS"] = f"--xla_dump_to={dump} --xla_dump_hlo_as_text"
        os.environ["JAX_PLATFORMS"] = "cpu"
        try:
            import jax
            import jax.numpy as jnp
        except ImportError as e:
            print(
                f"make_gpt_dump.py: jax is not importable ({e}); run it with a python that has "
                f"jax, e.g. python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install "
                f"jax==0.10.2 jaxlib==0.10.2",
                file=sys.stderr,
            )
            return 2
        step = _model(jax, jnp)
        step.__name__ = f"{name}_train_step"  # the module is jit_<name>_train_step
        params = _params(jax, jnp, args.layers)
        tokens = jax.random.randint(jax.random.PRNGKey(1), (BATCH, SEQ), 0, VOCAB, jnp.int32)
        jax.jit(step, donate_argnums=0).lower(params, tokens).compile()
        out_dir = os.path.join(args.out, f"{name}_train")
        os.makedirs(out_dir, exist_ok=True)
        for stage in ("after_optimizations", "before_optimizations"):
            # XLA:CPU names the optimized module "<n>.jit_<name>.cpu_after_optimizations.txt"
            found = sorted(glob.glob(os.path.join(dump, f"*jit_{name}_train_step.*{stage}.txt")))
            if not found:
                print(
                    f"make_gpt_dump.py: XLA wrote no *jit_{name}_train_step*.{stage}.txt under {dump}", file=sys.stderr
                )
                return 1
            dst = os.path.join(out_dir, f"{name}_train_step.{stage}.hlo.txt.gz")
            _copy_gz(found[-1], dst)
            print(f"{dst} ({os.path.getsize(dst) / 2**20:.1f} MB gz)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
