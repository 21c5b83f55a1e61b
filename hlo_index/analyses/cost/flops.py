"""FLOPs and transcendentals per instruction as XLA's ``HloCostAnalysis`` counts them, and the GPU
variant (``GpuHloCostAnalysis``: an elementwise element costs the op profile's clock cycles).

``instruction_flops(instr, options, sub)``: ``sub(computation)`` gives the (flops,
transcendentals) of one application of a called computation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import gcd
from typing import TYPE_CHECKING

from ...hlo.backend_config import backend_config
from ...hlo.model import Instruction
from ...hlo.opcodes import COSTED_ELEMENTWISE_OPCODES, TRANSCENDENTAL_OPCODES
from .shapes import elements, elements_recursive

if TYPE_CHECKING:
    from .op_profiles import OpProfiles

FMA_FLOPS = 2

# the ops XLA's cost analysis costs as elementwise, and which of them count as transcendentals
ELEMENTWISE = COSTED_ELEMENTWISE_OPCODES
# ops XLA's handlers cost as elementwise (copy has its own, free, handler)
COSTED_ELEMENTWISE = ELEMENTWISE - {"copy", "map"}
TRANSCENDENTAL = TRANSCENDENTAL_OPCODES


@dataclass(frozen=True)
class CostOptions:
    """``count_multiple_input_accesses``: XLA's option (repeated reads of broadcast and
    reduce-window operands count). ``gpu``: the GPU variant; ``capability`` picks its op profile."""

    count_multiple_input_accesses: bool = True
    gpu: bool = True
    capability: str | None = None
    profiles: OpProfiles | None = None


SubCost = Callable[[object], tuple[float, float]]


def elementwise_flops(opcode: str, shape, options: CostOptions) -> tuple[float, float]:
    if options.gpu:
        from .op_profiles import flops_per_element  # the GPUs' table: only a GPU cost reads it

        return float(
            flops_per_element(opcode, shape.element_type, options.capability, options.profiles)
            * elements_recursive(shape)
        ), 0.0
    n = float(elements(shape))
    return (0.0, n) if opcode in TRANSCENDENTAL else (n, 0.0)


def dot_flops(lhs_dims, contracting, out_elements: int) -> int:
    width = 1
    for d in contracting:
        width *= lhs_dims[d]
    return FMA_FLOPS * out_elements * width


def ragged_dot_flops(instr: Instruction) -> int:
    """XLA's count for a ragged dot: a dot's, over the result shape with one dimension deleted per
    rhs group dimension, deleting the i-th dimension of what is left at step i (XLA deletes by
    step, not by the group dimensions' positions: a result [6, 5] with one group dimension counts
    as [5], whatever the ragged mode)."""
    dims = list(instr.shape.dims)
    for i in range(len(instr.attrs.get("rhs_group_dims", ()) or ())):
        if i < len(dims):
            del dims[i]
    out_elements = 1
    for d in dims:
        out_elements *= d
    return dot_flops(instr.operands[0].shape.dims, instr.attrs.get("lhs_contracting_dims", ()), out_elements)


def convolution_fits(instr: Instruction, lhs, rhs, out) -> bool:
    """Whether the dim_labels and window name dimensions that ``lhs``, ``rhs`` and ``out`` have (a
    convolution op's are checked when the module is read; a cuDNN custom-call's are not)."""
    labels = instr.attrs.get("dim_labels")
    if labels is None:
        return True
    if any(s.is_tuple for s in (lhs, rhs, out)):
        return False
    window = instr.attrs.get("window") or ()
    spatial = len(labels.input_spatial)
    return (
        len(window) <= spatial
        and all(min(w.stride, w.window_dilation, w.base_dilation) >= 1 for w in window)
        and max(labels.input_batch, labels.input_feature, *labels.input_spatial) < lhs.rank
        and max(labels.kernel_input_feature, labels.kernel_output_feature, *labels.kernel_spatial) < rhs.rank
        and max(labels.output_batch, labels.output_feature, *labels.output_spatial) < out.rank
    )


def window_pairs(kernel: int, out_n: int, in_n: int, w) -> int:
    """(kernel position, output position) pairs of one spatial dim that land on an input element:
    ``o * stride - pad_low + k * window_dilation`` a multiple of ``base_dilation`` whose quotient
    lies in ``[0, in_n)``, as XLA counts them. One closed-form count per position of the shorter
    of the two, never a loop over both (a mutated ``f32[65536]`` kernel and output: 4e9 pairs)."""
    if min(kernel, out_n, in_n) <= 0:
        return 0
    if kernel <= out_n:  # per kernel position, the output positions: o * stride + c
        return sum(
            _landing(out_n, w.stride, k * w.window_dilation - w.pad_low, w.base_dilation, in_n) for k in range(kernel)
        )
    return sum(
        _landing(kernel, w.window_dilation, o * w.stride - w.pad_low, w.base_dilation, in_n) for o in range(out_n)
    )


def _landing(n: int, step: int, offset: int, dilation: int, in_n: int) -> int:
    """#{x in [0, n): x * step + offset = dilation * i for an i in [0, in_n)} (step, dilation >= 1)."""
    last = (in_n - 1) * dilation  # the largest landing value
    lo = max(0, -(offset // step))  # x * step + offset >= 0
    hi = min(n - 1, (last - offset) // step)  # x * step + offset <= last
    if hi < lo:
        return 0
    g = gcd(step, dilation)
    if offset % g:
        return 0
    period = dilation // g
    # x * step = -offset (mod dilation): x = first (mod period)
    first = (-offset // g) * pow(step // g, -1, period) % period if period > 1 else 0
    return (hi - first) // period - (lo - 1 - first) // period


def convolution_flops(instr: Instruction, lhs, rhs, out) -> int:
    labels = instr.attrs.get("dim_labels")
    window = instr.attrs.get("window") or ()
    if labels is None:
        return 0
    in_feature = lhs.dims[labels.input_feature]
    out_feature = out.dims[labels.output_feature]
    batch = lhs.dims[labels.input_batch]
    counts = []
    for k, w in enumerate(window):
        kernel = rhs.dims[labels.kernel_spatial[k]]
        out_n = out.dims[labels.output_spatial[k]]
        in_n = lhs.dims[labels.input_spatial[k]]
        counts.append(window_pairs(kernel, out_n, in_n, w))
    positions = 1
    for c in counts:
        positions *= c
    groups = int(instr.attrs.get("feature_group_count", 1) or 1)
    batch_groups = int(instr.attrs.get("batch_group_count", 1) or 1)
    return FMA_FLOPS * (in_feature // groups) * out_feature * (batch // batch_groups) * positions


def _scaled(sub: tuple[float, float], count: float) -> tuple[float, float]:
    return sub[0] * count, sub[1] * count


def instruction_flops(instr: Instruction, options: CostOptions, sub: SubCost) -> tuple[float, float]:
    """(flops, transcendentals) of one instruction (a fusion's are its fused instructions' sum;
    the GPU variant weighs them by utilization, which ``hlo_cost`` applies)."""
    op = instr.opcode
    shape = instr.shape
    if op in COSTED_ELEMENTWISE:
        return elementwise_flops(op, shape, options)
    if op == "map":
        return _scaled(sub(instr.called["to_apply"]), elements(shape))
    if op == "reduce":
        out = shape.tuple_shapes[0] if shape.tuple_shapes is not None else shape
        return _scaled(sub(instr.called["to_apply"]), elements(instr.operands[0].shape) - elements(out))
    if op == "reduce-window":
        return _scaled(sub(instr.called["to_apply"]), reduce_window_count(instr))
    if op == "select-and-scatter":
        source = elements(instr.operands[1].shape)
        window = 1
        for w in instr.attrs.get("window") or ():
            window *= w.size
        f1, t1 = _scaled(sub(instr.called["select"]), source * (window - 1))
        f2, t2 = _scaled(sub(instr.called["scatter"]), source)
        return f1 + f2, t1 + t2
    if op == "scatter":
        n = len(instr.operands) // 2
        return _scaled(sub(instr.called["to_apply"]), elements(instr.operands[n + 1].shape))
    if op in {"dot", "scaled-dot"}:  # a scaled dot costs as its dot: the scales are not counted
        return float(
            dot_flops(instr.operands[0].shape.dims, instr.attrs.get("lhs_contracting_dims", ()), elements(shape))
        ), 0.0
    if op == "ragged-dot":
        return float(ragged_dot_flops(instr)), 0.0
    if op == "convolution":
        return float(convolution_flops(instr, instr.operands[0].shape, instr.operands[1].shape, shape)), 0.0
    if op == "fft":
        real = instr.operands[0].shape
        log_factors = 1
        for d in instr.attrs.get("fft_length", ()) or ():
            log_factors *= max(int(d), 1).bit_length() - 1
        return float(FMA_FLOPS * 4 * log_factors * elements(real)), 0.0
    if op == "triangular-solve":
        a, b = instr.operands[0].shape, instr.operands[1].shape
        return float(FMA_FLOPS * a.dims[-1] * elements(b)), 0.0
    if op == "cholesky":
        a = instr.operands[0].shape
        return float(a.dims[-1] * elements(a) // 3), 0.0
    if op == "sort":
        n = elements(instr.operands[0].shape)
        return float(n * ((n - 1).bit_length() if n > 1 else 0)), 0.0
    if op == "rng":
        return 0.0, float(elements(shape))
    if op == "rng-bit-generator":
        return 0.0, float(elements_recursive(shape))
    if op in ("all-reduce", "all-reduce-start"):
        if options.gpu:
            root = instr.called["to_apply"].root
            assert root is not None, instr.name
            return elementwise_flops(
                root.opcode, shape if shape.tuple_shapes is None else shape.tuple_shapes[0], options
            )[0], 0.0
        return float(sum(elements(s) for s in _array_leaves(shape))), 0.0
    if op == "concatenate" and options.gpu:
        return float(concatenate_gpu_flops(instr)), 0.0
    if op == "custom-call":
        return custom_call_flops(instr, options)
    return 0.0, 0.0


def _array_leaves(shape):
    if shape.is_tuple:
        for s in shape.tuple_shapes:
            yield from _array_leaves(s)
    else:
        yield shape


def concatenate_gpu_flops(instr: Instruction) -> int:
    """6 per element (compare and branch); 400 when an operand's extent along a non-major
    concatenated dim is not a whole number of warps (divergent warps)."""
    n = elements_recursive(instr.shape)
    dims = instr.attrs.get("dimensions") or (0,)
    dim = dims[0]
    if dim == 0:
        return 6 * n
    for operand in instr.operands:
        size = operand.shape.dims[dim]
        if size % 32:
            return 400 * n
    return 6 * n


def concatenate_gpu_utilization(instr: Instruction, k: int) -> float | None:
    dims = instr.attrs.get("dimensions") or (0,)
    if dims[0] == 0:
        return None
    size = instr.operands[k].shape.dims[dims[0]]
    return ((size + 31) // 32 * 32) / size if size else None


def reduce_window_count(instr: Instruction) -> int:
    """Reducer applications: (window - 1) per output element, or, for a padded window that
    reduces one dim and broadcasts it back, one reduction plus the broadcast."""
    window = instr.attrs.get("window") or ()
    size = 1
    for w in window:
        size *= w.size
    shape = instr.shape.tuple_shapes[0] if instr.shape.tuple_shapes is not None else instr.shape
    out = elements(shape)
    count = (size - 1) * out
    reducing = [w for w in window if w.size != 1]
    padded = [w for w in window if w.pad_low or w.pad_high]
    if len(reducing) == 1 and len(padded) == 1 and not instr.shape.is_tuple:
        for k, w in enumerate(window):
            if w.size != 1 and w.pad_low and w.pad_high and w.pad_low == w.pad_high and w.size == 2 * w.pad_low + 1:
                if w.pad_low == instr.shape.dims[k] - 1:
                    n = instr.shape.dims[k]
                    return out // n + (n - 1)
                break
    return count


def window_size(instr: Instruction) -> int:
    size = 1
    for w in instr.attrs.get("window") or ():
        size *= w.size
    return size


CUBLAS_TARGETS = ("__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8")


def is_cublas(instr: Instruction) -> bool:
    return str(instr.attrs.get("custom_call_target", "")) in CUBLAS_TARGETS


def is_dnn_convolution(instr: Instruction) -> bool:
    target = str(instr.attrs.get("custom_call_target", ""))
    return target.startswith("__cudnn$conv")


def custom_call_flops(instr: Instruction, options: CostOptions) -> tuple[float, float]:
    if options.gpu and is_cublas(instr):
        config = backend_config(instr) or {}
        gemm = config.get("gemm_backend_config", config)
        dnums = gemm.get("dot_dimension_numbers", {})
        contracting = [int(d) for d in dnums.get("lhs_contracting_dimensions", [])]
        out = instr.shape.tuple_shapes[0] if instr.shape.tuple_shapes is not None else instr.shape
        lhs = instr.operands[0].shape if instr.operands else None
        # a custom-call's operands are not checked against its config (XLA's verifier does not):
        # a config that does not fit them has no count
        if lhs is None or lhs.is_tuple or any(not 0 <= d < lhs.rank for d in contracting):
            return -1.0, 0.0
        return float(dot_flops(lhs.dims, contracting, elements(out))), 0.0
    if options.gpu and is_dnn_convolution(instr):
        out = instr.shape.tuple_shapes[0] if instr.shape.tuple_shapes is not None else instr.shape
        if len(instr.operands) < 2 or not convolution_fits(
            instr, instr.operands[0].shape, instr.operands[1].shape, out
        ):
            return -1.0, 0.0
        return float(convolution_flops(instr, instr.operands[0].shape, instr.operands[1].shape, out)), 0.0
    estimate = triton_cost_estimate(instr) if options.gpu else None
    if estimate is not None:
        return float(estimate.get("flops", -1)), 0.0
    return -1.0, 0.0


def triton_cost_estimate(instr: Instruction) -> dict | None:
    """The ``cost_estimate_json`` a ``triton_kernel_call`` custom-call carries in its backend
    config (its quotes escaped any of the ways jax writes them), or None."""
    target = str(instr.attrs.get("custom_call_target", ""))
    if "triton_kernel_call" not in target:
        return None
    import json
    import re

    text = str(instr.attrs.get("backend_config", ""))
    m = re.search(r"cost_estimate_json\s*=\s*", text)
    if m is None:
        return None
    rest = text[m.end() :]
    # undo one level of quoting at a time until a JSON object appears
    for _ in range(5):
        start = rest.find("{")
        if start >= 0:
            candidate = _balanced(rest, start)
            try:
                value = json.loads(candidate)
                if isinstance(value, dict):
                    return value
            except ValueError:
                pass
        rest = _unescape(rest)
    return None


def _balanced(text: str, start: int) -> str:
    depth = 0
    for k in range(start, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return text[start : k + 1]
    return text[start:]


def _unescape(text: str) -> str:
    import re

    text = re.sub(r"\\U([0-9a-fA-F]{8})", lambda m: chr(int(m.group(1), 16)), text)
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    text = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text)
    text = text.replace("\\22", '"')  # jax's Substitute form of an escaped quote
    return text.replace('\\"', '"').replace("\\\\", "\\")
