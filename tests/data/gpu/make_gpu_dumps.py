"""Make the XLA:GPU dumps in this directory and time their kernels (run by hand on a GPU, never by the tests).

    python tests/data/gpu/make_gpu_dumps.py OUT_DIR [VARIANT ...]    # needs jax with a CUDA GPU

Training steps written in plain jax, so that they need nothing else (``VARIANTS``):

- ``gpt_f32``, ``gpt_bf16``: a small GPT (token embedding, two pre-norm transformer blocks with
  causal softmax attention and a GELU MLP, a tied output projection, softmax cross-entropy, Adam),
  in float32, and with bfloat16 activations and matrix products over float32 weights;
- ``gpt_wide_bf16``: the same, twice as wide, with four times the vocabulary and twice the sequence;
- ``resnet_bf16``: residual blocks of 3x3 convolutions with batch normalisation, bfloat16.

Each compiles with ``XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text``; the train step's module is
kept before and after optimizations, gzipped, with this file's directory cut from the source paths, in
``<variant>/`` beside XLA's description of the GPU it compiled for (``*.gpu_target_config.pbtxt``).

Then the step runs under jax's profiler: 5 warm-up steps, then ``STEPS`` timed steps. ``summarize``
pairs each step's GPU kernels with XLA's own thunk sequence of the module (``*.thunk_sequence.txt``
and ``*.thunk_metadata.txt`` of the dump: the kernel each thunk launches, its grid and threads, and
the instruction it runs for; XLA reuses one kernel for fusions it found equal, so a kernel's name is
not enough) and writes ``<variant>/kernels.json``: per thunk, the instruction, the kernel, the launch
dimensions XLA chose and the median, minimum and maximum of its duration over the timed steps in
microseconds (cuBLAS and cuDNN calls are paired in order with the kernels no thunk names: those
libraries name their own); with the device, the versions and XLA's own ``compiled.cost_analysis()``
of the module. These files are measurements of XLA and the GPU, written by nothing in hlo-index.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 20
GPT = {"vocab": 8192, "d_model": 512, "heads": 8, "layers": 2, "seq": 256, "batch": 16, "mlp": 2048}
GPT_WIDE = {"vocab": 32768, "d_model": 1024, "heads": 16, "layers": 2, "seq": 512, "batch": 8, "mlp": 4096}
RESNET = {"batch": 64, "size": 56, "channels": 64, "blocks": 3, "classes": 1000}
# variant -> (program, compute dtype, configuration); the directory of each is its name
VARIANTS = {
    "gpt_f32": ("gpt", "f32", GPT),
    "gpt_bf16": ("gpt", "bf16", GPT),
    "gpt_wide_bf16": ("gpt", "bf16", GPT_WIDE),
    "resnet_bf16": ("resnet", "bf16", RESNET),
}


def _gpt(dtype_name: str, c: dict):
    import jax
    import jax.numpy as jnp

    compute = jnp.bfloat16 if dtype_name == "bf16" else jnp.float32
    head_dim = c["d_model"] // c["heads"]

    def init(key):
        keys = iter(jax.random.split(key, 4 + 6 * c["layers"]))

        def normal(shape, scale):
            return jax.random.normal(next(keys), shape, jnp.float32) * scale

        params = {"embed": normal((c["vocab"], c["d_model"]), 0.02), "pos": normal((c["seq"], c["d_model"]), 0.02)}
        params["blocks"] = [
            {
                "ln1": jnp.ones((c["d_model"],), jnp.float32),
                "qkv": normal((c["d_model"], 3 * c["d_model"]), 0.02),
                "proj": normal((c["d_model"], c["d_model"]), 0.02),
                "ln2": jnp.ones((c["d_model"],), jnp.float32),
                "up": normal((c["d_model"], c["mlp"]), 0.02),
                "down": normal((c["mlp"], c["d_model"]), 0.02),
            }
            for _ in range(c["layers"])
        ]
        params["ln_f"] = jnp.ones((c["d_model"],), jnp.float32)
        return params

    def layer_norm(x, scale):
        x32 = x.astype(jnp.float32)
        mean = x32.mean(-1, keepdims=True)
        var = ((x32 - mean) ** 2).mean(-1, keepdims=True)
        return ((x32 - mean) * jax.lax.rsqrt(var + 1e-5) * scale).astype(compute)

    def attention(x, block):
        b, s, _ = x.shape
        qkv = x @ block["qkv"].astype(compute)
        q, k, v = jnp.split(qkv.reshape(b, s, 3, c["heads"], head_dim), 3, axis=2)
        q, k, v = (t[:, :, 0].transpose(0, 2, 1, 3) for t in (q, k, v))
        scores = (q @ k.transpose(0, 1, 3, 2)).astype(jnp.float32) / jnp.sqrt(float(head_dim))
        mask = jnp.tril(jnp.ones((s, s), bool))
        scores = jnp.where(mask, scores, -1e9)
        weights = jax.nn.softmax(scores, axis=-1).astype(compute)
        out = (weights @ v).transpose(0, 2, 1, 3).reshape(b, s, c["d_model"])
        return out @ block["proj"].astype(compute)

    def loss_fn(params, tokens, targets):
        x = (params["embed"][tokens] + params["pos"]).astype(compute)
        for block in params["blocks"]:
            x = x + attention(layer_norm(x, block["ln1"]), block)
            h = jax.nn.gelu(layer_norm(x, block["ln2"]) @ block["up"].astype(compute))
            x = x + h @ block["down"].astype(compute)
        logits = (layer_norm(x, params["ln_f"]) @ params["embed"].T.astype(compute)).astype(jnp.float32)
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.take_along_axis(logp, targets[..., None], axis=-1).mean()

    def batch(rng):
        tokens = rng.integers(0, c["vocab"], (c["batch"], c["seq"]))
        return tokens.astype("int32"), rng.integers(0, c["vocab"], (c["batch"], c["seq"])).astype("int32")

    return init, _adam(loss_fn), batch


def _adam(loss_fn):
    import jax
    import jax.numpy as jnp

    def train_step(params, m, v, step, inputs, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, inputs, targets)
        b1, b2, lr = 0.9, 0.999, 3e-4
        m = jax.tree.map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
        v = jax.tree.map(lambda v_, g: b2 * v_ + (1 - b2) * g * g, v, grads)
        t = step + 1
        scale = lr * jnp.sqrt(1 - b2**t) / (1 - b1**t)
        params = jax.tree.map(lambda p, m_, v_: p - scale * m_ / (jnp.sqrt(v_) + 1e-8), params, m, v)
        return params, m, v, t, loss

    return train_step


def _resnet(dtype_name: str, c: dict):
    """Residual blocks of two 3x3 convolutions with batch normalisation (batch statistics) and
    ReLU, NHWC, then global average pooling, a dense layer and softmax cross-entropy."""
    import jax
    import jax.numpy as jnp

    compute = jnp.bfloat16 if dtype_name == "bf16" else jnp.float32
    ch = c["channels"]

    def init(key):
        keys = iter(jax.random.split(key, 2 + 2 * c["blocks"]))
        conv = lambda: jax.random.normal(next(keys), (3, 3, ch, ch), jnp.float32) * (2.0 / (9 * ch)) ** 0.5  # noqa: E731
        return {
            "blocks": [
                {
                    "w1": conv(),
                    "g1": jnp.ones((ch,)),
                    "b1": jnp.zeros((ch,)),
                    "w2": conv(),
                    "g2": jnp.ones((ch,)),
                    "b2": jnp.zeros((ch,)),
                }
                for _ in range(c["blocks"])
            ],
            "dense": jax.random.normal(next(keys), (ch, c["classes"]), jnp.float32) * 0.01,
        }

    def conv(x, w):
        return jax.lax.conv_general_dilated(
            x, w.astype(compute), (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )

    def batch_norm(x, g, b):
        x32 = x.astype(jnp.float32)
        mean = x32.mean((0, 1, 2))
        var = ((x32 - mean) ** 2).mean((0, 1, 2))
        return ((x32 - mean) * jax.lax.rsqrt(var + 1e-5) * g + b).astype(compute)

    def loss_fn(params, images, labels):
        x = images.astype(compute)
        for blk in params["blocks"]:
            h = jax.nn.relu(batch_norm(conv(x, blk["w1"]), blk["g1"], blk["b1"]))
            h = batch_norm(conv(h, blk["w2"]), blk["g2"], blk["b2"])
            x = jax.nn.relu(x + h)
        pooled = x.astype(jnp.float32).mean((1, 2))
        logp = jax.nn.log_softmax(pooled @ params["dense"], axis=-1)
        return -jnp.take_along_axis(logp, labels[:, None], axis=-1).mean()

    def batch(rng):
        images = rng.standard_normal((c["batch"], c["size"], c["size"], ch)).astype("float32")
        return images, rng.integers(0, c["classes"], (c["batch"],)).astype("int32")

    return init, _adam(loss_fn), batch


def _child(variant: str, out_path: str) -> None:
    """Compile, dump (XLA_FLAGS set by the parent), profile; write this variant's measurements."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    program, dtype_name, config = VARIANTS[variant]
    init, train_step, batch = {"gpt": _gpt, "resnet": _resnet}[program](dtype_name, config)
    params = init(jax.random.PRNGKey(0))
    m = jax.tree.map(jnp.zeros_like, params)
    v = jax.tree.map(jnp.zeros_like, params)
    step = jnp.zeros((), jnp.float32)
    tokens, targets = (jnp.asarray(a) for a in batch(np.random.default_rng(0)))
    step_fn = jax.jit(train_step, donate_argnums=(0, 1, 2))
    lowered = step_fn.lower(params, m, v, step, tokens, targets)
    compiled = lowered.compile()
    cost = compiled.cost_analysis()
    if isinstance(cost, list):
        cost = cost[0] if cost else {}
    state = (params, m, v, step)
    for _ in range(5):
        state = compiled(*state, tokens, targets)[:4]
    jax.block_until_ready(state)
    trace_dir = tempfile.mkdtemp()
    import time

    walls = []
    with jax.profiler.trace(trace_dir):
        for _ in range(STEPS):
            start = time.perf_counter()
            state = compiled(*state, tokens, targets)[:4]
            jax.block_until_ready(state)
            walls.append((time.perf_counter() - start) * 1e6)
    kernels = _kernel_events(trace_dir)
    device = jax.devices()[0]
    result = {
        "variant": variant,
        "xla_cost_analysis": {k: float(v) for k, v in dict(cost).items()},
        "step_wall_us": walls,
        "kernels": kernels,
        "device": {
            "kind": device.device_kind,
            "compute_capability": getattr(device, "compute_capability", None),
            "platform": device.platform,
        },
        "versions": {"jax": jax.__version__, "python": sys.version.split()[0]},
    }
    with open(out_path, "w") as f:
        json.dump(result, f)


def _kernel_events(trace_dir: str) -> list[dict]:
    """Every event on a GPU plane of the trace: name, duration and the stats that name its HLO op."""
    from jax.profiler import ProfileData

    events = []
    for path in glob.glob(os.path.join(trace_dir, "**", "*.xplane.pb"), recursive=True):
        data = ProfileData.from_file(path)
        for plane in data.planes:
            if "GPU" not in plane.name:
                continue
            for line in plane.lines:
                for event in line.events:
                    stats = {
                        name: value if isinstance(value, (int, float)) else str(value)[:300]
                        for name, value in event.stats
                    }
                    events.append(
                        {
                            "plane": plane.name,
                            "line": line.name,
                            "name": event.name,
                            "start_ns": event.start_ns,
                            "duration_us": event.duration_ns / 1000.0,
                            **stats,
                        }
                    )
    return events


def main(out_dir: str, variants: list[str]) -> None:
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp()
    for variant in variants:
        dump = os.path.join(work, variant)
        measured = os.path.join(work, f"measured_{variant}.json")
        env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={dump} --xla_dump_hlo_as_text")
        subprocess.run([sys.executable, __file__, "--child", variant, measured], env=env, check=True)
        kept = os.path.join(out_dir, variant)
        os.makedirs(kept, exist_ok=True)
        for text_path in sorted(glob.glob(os.path.join(dump, "*jit_train_step*optimizations.txt"))):
            with open(text_path) as f:
                text = f.read().replace(HERE + os.sep, "")
            with gzip.open(os.path.join(kept, os.path.basename(text_path) + ".gz"), "wt") as f:
                f.write(text)
        for config in glob.glob(os.path.join(dump, "*jit_train_step.gpu_target_config.pbtxt")):
            shutil.copy(config, kept)
        summarize(measured, dump, kept)
    shutil.rmtree(work)


_THUNK = re.compile(r"(\d+): (\w+)\s+\[[^]]*\] (\S+)(?: grid: \[([\d, ]+)\] threads: \[([\d, ]+)\])?")
_METADATA = re.compile(r'profile_annotation: "([^"]*)"\s*thunk_id: (\d+)\s*}\s*thunk_kind: "(\w+)"')
_NOT_GEMM = ("memcpy", "Memset", "Memcpy")
_KERNEL_THUNKS = ("kCustomKernel", "kKernel")
_LIBRARY_THUNKS = ("kCublasLtMatmul", "kGemm", "kConvolution", "kCuDnn", "kFft", "kCustomCall")


def summarize(measured_path: str, dump_dir: str, out_dir: str) -> None:
    """Pair the timed kernels of each step with the module's thunks; write ``kernels.json``."""
    with open(measured_path) as f:
        measured = json.load(f)
    (sequence_path,) = glob.glob(os.path.join(dump_dir, "*jit_train_step.thunk_sequence.txt"))
    (metadata_path,) = glob.glob(os.path.join(dump_dir, "*jit_train_step.thunk_metadata.txt"))
    with open(metadata_path) as f:
        instruction_of = {int(i): name for name, i, _ in _METADATA.findall(f.read())}
    thunks = []
    with open(sequence_path) as f:
        for line in f:
            m = _THUNK.match(line.strip())
            if m and m.group(2) in _KERNEL_THUNKS + _LIBRARY_THUNKS:
                thunk_id, kind, kernel, grid, threads = m.groups()
                thunks.append(
                    {
                        "thunk": int(thunk_id),
                        "kind": kind,
                        "instruction": instruction_of.get(int(thunk_id)),
                        "kernel": kernel if grid else None,
                        "grid": [int(x) for x in grid.split(",")] if grid else None,
                        "threads": [int(x) for x in threads.split(",")] if threads else None,
                        "durations_us": [],
                    }
                )
    events = sorted(measured["kernels"], key=lambda e: e["start_ns"])
    steps = len(measured["step_wall_us"])
    per_step = len(events) // steps
    kernel_names = {t["kernel"] for t in thunks if t["kernel"]}
    gemm_thunks = [t for t in thunks if t["kernel"] is None]
    library_us = []
    for k in range(steps):
        step = events[k * per_step : (k + 1) * per_step]
        by_name: dict[str, list] = {}
        others = []
        for e in step:
            if e["name"] in kernel_names:
                by_name.setdefault(e["name"], []).append(e)
            elif not e["name"].startswith(_NOT_GEMM):
                others.append(e)
        for t in thunks:
            if t["kernel"] and by_name.get(t["kernel"]):
                t["durations_us"].append(by_name[t["kernel"]].pop(0)["duration_us"])
        library_us.append(sum(e["duration_us"] for e in others))
        if len(others) == len(gemm_thunks):
            for t, e in zip(gemm_thunks, others):
                t["durations_us"].append(e["duration_us"])
                t["kernel"] = e["name"]
    for t in thunks:
        d = sorted(t.pop("durations_us"))
        t["median_us"] = d[len(d) // 2] if d else None
        t["min_us"] = d[0] if d else None
        t["max_us"] = d[-1] if d else None
        t["launches"] = len(d)
    os.makedirs(out_dir, exist_ok=True)
    summary = {
        "device": measured["device"],
        "versions": measured["versions"],
        "config": VARIANTS[measured["variant"]][2] if measured["variant"] in VARIANTS else None,
        "timed_steps": steps,
        "step_wall_us_median": sorted(measured["step_wall_us"])[steps // 2],
        # the library kernels (cuBLAS, cuDNN) of a step, paired with their thunks above or not
        "library_us_median": sorted(library_us)[steps // 2] if library_us else None,
        "xla_cost_analysis": {
            k: measured["xla_cost_analysis"][k]
            for k in ("flops", "transcendentals", "bytes accessed")
            if k in measured["xla_cost_analysis"]
        },
        "thunks": thunks,
    }
    with open(os.path.join(out_dir, "kernels.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "--summarize":
        summarize(*sys.argv[2:])
    elif len(sys.argv) >= 2 and not sys.argv[1].startswith("-") and set(sys.argv[2:]) <= set(VARIANTS):
        main(sys.argv[1], sys.argv[2:] or list(VARIANTS))
    else:
        sys.exit(__doc__)
