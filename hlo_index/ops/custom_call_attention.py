"""TransformerEngine's fused attention custom-calls, read from their typed-FFI attributes.

``te_fused_attn_forward_ffi(q, k, v, bias, seed, q_cu_seqlens, kv_cu_seqlens, ...)`` gives
``(out, softmax_aux, rng_state, workspace)``; ``te_fused_attn_backward_ffi(q, k, v, bias,
softmax_aux, rng_state, out, dout, q_cu_seqlens, kv_cu_seqlens, ...)`` gives ``(dq, dk, dv,
dbias, workspace)``; the trailing operands (sequence offsets, segment ids and positions) are
empty outside TE's THD layouts. Modelled: the ``BSHD_BSHD_BSHD`` layout (``qkv_layout`` 9: q
``[B, Sq, H, D]``, k ``[B, Skv, G, D]``, v ``[B, Skv, G, Dv]``, query head h reading kv head
``h floordiv (H / G)``), no bias, no dropout, one segment per sequence, and the masks ``mask_type``
0 (none) and 2 (causal, top-left).

Query row i and key row j of batch b form a pair unless the causal mask hides j from i
(``j > i``). An output element reads, over its pairs (query row i and head h; key row j and kv
head g):
* out[b, i, h, e]: q[b, i, h, :], k[b, j, g, :], v[b, j, g, e];
* softmax_aux[b, h, i, 0] (the row's log-sum-exp): q[b, i, h, :], k[b, j, g, :];
* dq[b, i, h, :] and dk[b, j, g, :]: q, k and v rows, out and dout rows, softmax_aux[b, h, i, 0]
  (dk over every query head h of group g);
* dv[b, j, g, e]: q and k rows, dout[b, i, h, e], softmax_aux[b, h, i, 0].
An element with no pair (a key row no query row sees) reads nothing of these. bias, rng_state,
the sequence lengths (unused without a padding mask) and the empty operands are read by nothing;
the workspace and the empty dbias read nothing. The forward's ``rng_state`` (``u32[n, 4]``, two
int64 as TE's ``populate_rng_state_kernel`` in ``transformer_engine/jax/csrc`` writes them: the
seed's first int64, then an offset TE keeps on the host) reads ``seed[c]`` at ``rng_state[0, c]``
for c in {0, 1} (the two u32 halves) and nothing elsewhere.

A padding mask (``mask_type`` 1, 3) makes the rows read depend on the sequence lengths at run
time; it is UNDEFINED, as is every other configuration, naming what differs. (The keys a query row
of a sequence reads could be runtime variables; what the kernel writes in the rows past a
sequence's length is not documented, in cuDNN's attention documentation or TransformerEngine's
sources, and a map for them would be a guess.)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..affine import Expr, IndexingMap, Interval, const, dim, range_var
from ..hlo.backend_config import parse_typed_attributes
from ..hlo.model import Instruction
from .registry import OperandMaps
from .shape_maps import full_interval

FORWARD = "te_fused_attn_forward_ffi"
BACKWARD = "te_fused_attn_backward_ffi"
TARGETS = (FORWARD, BACKWARD)

BSHD_BSHD_BSHD = 9
NO_MASK, PADDING, CAUSAL, PADDING_CAUSAL = 0, 1, 2, 3

# The coordinates of each tensor role, as tokens: b batch, i query row, j key row, h query head,
# g kv head, f the q/k feature, e the v feature, 0 the unit last dim of softmax_aux.
_TOKENS = {
    "q": "bihf",
    "k": "bjgf",
    "v": "bjge",
    "out": "bihe",
    "dout": "bihe",
    "aux": "bhi0",
    "dq": "bihf",
    "dk": "bjgf",
    "dv": "bjge",
}
# (output role, operand role) -> the feature token the two share element for element, "" for
# none (the operand's features are all read); absent: the output does not read that operand.
_READS: dict[tuple[str, str], str] = {
    ("out", "q"): "",
    ("out", "k"): "",
    ("out", "v"): "e",
    ("aux", "q"): "",
    ("aux", "k"): "",
    **{("dq", r): "" for r in ("q", "k", "v", "out", "dout", "aux")},
    **{("dk", r): "" for r in ("q", "k", "v", "out", "dout", "aux")},
    ("dv", "q"): "",
    ("dv", "k"): "",
    ("dv", "dout"): "e",
    ("dv", "aux"): "",
}
_FORWARD_OPERANDS = {0: "q", 1: "k", 2: "v", 5: "q_cu", 6: "kv_cu"}
_BACKWARD_OPERANDS = {0: "q", 1: "k", 2: "v", 4: "aux", 6: "out", 7: "dout", 8: "q_cu", 9: "kv_cu"}
_FORWARD_OUTPUTS = ("out", "aux")
_BACKWARD_OUTPUTS = ("dq", "dk", "dv")
SEED = 4  # of the forward call


@dataclass(frozen=True)
class Attention:
    """One call's sizes and mask: batch, query / key rows, query / kv heads, q/k and v features."""

    batch: int
    q_rows: int
    kv_rows: int
    heads: int
    kv_heads: int
    features: int
    v_features: int
    causal: bool
    operands: dict[int, str]  # operand index -> role; the others are read by nothing
    outputs: tuple[str, ...]  # output j -> role; after them rng_state (forward), dbias, workspace

    def size(self, token: str) -> int:
        return {
            "b": self.batch,
            "i": self.q_rows,
            "j": self.kv_rows,
            "h": self.heads,
            "g": self.kv_heads,
            "f": self.features,
            "e": self.v_features,
            "0": 1,
        }[token]

    def dims(self, role: str) -> tuple[int, ...]:
        return tuple(self.size(t) for t in _TOKENS[role])

    @property
    def group(self) -> int:
        """Query heads per kv head."""
        return self.heads // self.kv_heads


def attention_of(instr: Instruction) -> Attention | str:
    """The call's sizes and mask, or why it is not the modelled configuration."""
    cfg = parse_typed_attributes(instr.attrs.get("backend_config"))
    if cfg is None:
        return "backend_config is not a dictionary of typed attributes"
    expected = {"qkv_layout": BSHD_BSHD_BSHD, "bias_type": 0, "max_segments_per_seq": 1, "window_size_left": -1}
    for key, value in expected.items():
        if cfg.get(key, value) != value:
            return f"{key} = {cfg.get(key)} (modelled: {key} = {value})"
    if cfg.get("dropout_probability", 0.0) != 0.0:
        return "dropout: which scores are dropped depends on the random state"
    mask = cfg.get("mask_type")
    if mask in (PADDING, PADDING_CAUSAL):
        return f"mask_type = {mask}, a padding mask: which rows are read depends on the sequence lengths at run time"
    if mask not in (NO_MASK, CAUSAL):
        return f"mask_type = {mask} (modelled: no mask, 0, and the causal mask, 2)"
    causal = mask in (CAUSAL, PADDING_CAUSAL)
    if cfg.get("window_size_right", -1) not in ((-1, 0) if causal else (-1,)):
        return f"window_size_right = {cfg.get('window_size_right')}: a sliding window is not modelled"
    forward = instr.attr("custom_call_target") == FORWARD
    operands = _FORWARD_OPERANDS if forward else _BACKWARD_OPERANDS
    ops = instr.operands
    if len(ops) <= max(operands) or any(o.shape.is_tuple for o in ops):
        return f"expected at least {max(operands) + 1} array operands"
    q, k, v = (o.shape.dims for o in ops[:3])
    if len(q) != 4 or len(k) != 4 or len(v) != 4:
        return "q, k and v are not all [batch, rows, heads, features] (BSHD)"
    a = Attention(
        batch=q[0],
        q_rows=q[1],
        kv_rows=k[1],
        heads=q[2],
        kv_heads=k[2],
        features=q[3],
        v_features=v[3],
        causal=causal,
        operands=dict(operands),
        outputs=_FORWARD_OUTPUTS if forward else _BACKWARD_OUTPUTS,
    )
    named = {
        "input_batch": a.batch,
        "q_max_seqlen": a.q_rows,
        "kv_max_seqlen": a.kv_rows,
        "attn_heads": a.heads,
        "num_gqa_groups": a.kv_heads,
        "qk_head_dim": a.features,
        "v_head_dim": a.v_features,
    }
    for key, size in named.items():
        if key in cfg and cfg[key] != size:
            return f"{key} = {cfg[key]} but the operands give {size}"
    if a.kv_heads == 0 or a.heads % a.kv_heads:
        return f"{a.heads} query heads do not split into {a.kv_heads} kv head groups"
    for index, role in operands.items():
        want = (a.batch + 1,) if role.endswith("_cu") else a.dims(role)
        if ops[index].shape.dims != want:
            return f"operand {index} ({role}) is {ops[index].shape}, expected dims {list(want)}"
    if any(o.shape.num_elements for o in ops[max(operands) + 1 :]):
        return "sequence offsets or segment ids are given (THD layouts): not modelled"
    shapes = [instr.shape.leaf(j) for j in range(instr.shape.num_outputs)]
    if len(shapes) < len(a.outputs) or any(shapes[j].dims != a.dims(r) for j, r in enumerate(a.outputs)):
        roles = ", ".join(a.outputs)
        return f"outputs are not ({roles}, ...) of the operands' sizes"
    return a


# ---- the maps ------------------------------------------------------------------------------


class _Variables:
    """The range variables of one map, allocated in order of first use."""

    def __init__(self) -> None:
        self.intervals: list[Interval] = []

    def new(self, size: int) -> Expr:
        self.intervals.append(full_interval(size))
        return range_var(len(self.intervals) - 1)


def _coordinates(a: Attention, fixed: str, other: str, shared_feature: str, rv: _Variables) -> dict[str, Expr]:
    """Each token of ``fixed`` (the map's domain, as dims) and ``other`` (its results) as an
    expression: a dim where ``fixed`` has it, derived across h / g, else a new range variable."""
    coords: dict[str, Expr] = {t: dim(n) for n, t in enumerate(fixed) if t != "0"}
    coords["0"] = const(0)
    for t in ("f", "e"):  # features are shared only where the pair says so
        if t in fixed and t != shared_feature:
            del coords[t]
    if "h" not in coords and "g" in coords:
        coords["h"] = coords["g"] * a.group + rv.new(a.group)
    if "g" not in coords and "h" in coords:
        coords["g"] = coords["h"].floordiv(a.group)
    for t in other:
        if t not in coords:
            coords[t] = rv.new(a.size(t))
    return coords


def _pair_constraints(a: Attention, coords: dict[str, Expr]) -> list[tuple[Expr, Interval]]:
    """That a pair (i, j) exists: over the rows named in ``coords``, the others existing."""
    i, j = coords.get("i"), coords.get("j")
    if not a.causal:
        return []
    if i is not None and j is not None:
        return [(j - i, Interval(-a.q_rows, 0))]
    if i is None and j is not None:  # some query row sees j: one at or after it
        return [(j, Interval(0, a.q_rows - 1))]
    return []  # key row 0 is seen by every query row


def _pair_map(a: Attention, domain: str, results: str, shared_feature: str) -> IndexingMap:
    rv = _Variables()
    coords = _coordinates(a, domain, results, shared_feature, rv)
    if a.size("i") == 0 or a.size("j") == 0:
        return IndexingMap.known_empty(len(domain), len(results))
    return IndexingMap(
        [full_interval(a.size(t)) for t in domain],
        rv.intervals,
        (),
        [coords[t] for t in results],
        _pair_constraints(a, coords),
    )


def _rng_state_maps(instr: Instruction) -> tuple[IndexingMap, IndexingMap] | str:
    """(rng_state -> seed, seed -> rng_state): the seed's first two u32 land in row 0."""
    seed, state = instr.operands[SEED].shape, instr.shape.leaf(2)
    if seed.element_type != "u32" or seed.rank != 1 or seed.dims[0] < 2:
        return f"seed {seed} is not a u32 vector of at least two elements (one int64)"
    if state.element_type != "u32" or state.rank != 2 or state.dims[1] != 4 or state.dims[0] < 1:
        return f"rng_state {state} is not u32[n, 4] (two int64 per row)"
    out2in = IndexingMap(
        [full_interval(n) for n in state.dims], (), (), [dim(1)], [(dim(0), Interval(0, 0)), (dim(1), Interval(0, 1))]
    )
    in2out = IndexingMap([full_interval(seed.dims[0])], (), (), [const(0), dim(0)], [(dim(0), Interval(0, 1))])
    return out2in, in2out


def _undefined(why: str) -> IndexingMap:
    return IndexingMap.undefined(f"custom-call to fused attention: {why}")


def attention_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    n = len(instr.operands)
    a = attention_of(instr)
    if isinstance(a, str):
        return [OperandMaps(k, (_undefined(a),)) for k in range(n)]
    if output_index >= len(a.outputs):
        result = [OperandMaps(k, ()) for k in range(n)]  # dbias (empty), the workspace
        if instr.attr("custom_call_target") == FORWARD and output_index == len(a.outputs):
            rng = _rng_state_maps(instr)
            result[SEED] = OperandMaps(SEED, (_undefined(rng) if isinstance(rng, str) else rng[0],))
        return result
    output = a.outputs[output_index]
    result = [OperandMaps(k, ()) for k in range(n)]
    for k, role in a.operands.items():
        if (output, role) in _READS:
            result[k] = OperandMaps(k, (_pair_map(a, _TOKENS[output], _TOKENS[role], _READS[output, role]),))
    return result


def attention_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    outputs = instr.shape.num_outputs
    a = attention_of(instr)
    if isinstance(a, str):
        return [(_undefined(a),) for _ in range(outputs)]
    role = a.operands.get(operand_index)
    per_output: list[tuple[IndexingMap, ...]] = []
    for j in range(outputs):
        if j >= len(a.outputs):
            if instr.attr("custom_call_target") == FORWARD and j == len(a.outputs) and operand_index == SEED:
                rng = _rng_state_maps(instr)
                per_output.append((_undefined(rng) if isinstance(rng, str) else rng[1],))
            else:
                per_output.append(())
            continue
        output = a.outputs[j]
        if role is not None and (output, role) in _READS:
            per_output.append((_pair_map(a, _TOKENS[role], _TOKENS[output], _READS[output, role]),))
        else:
            per_output.append(())
    return per_output
