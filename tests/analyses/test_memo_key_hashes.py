"""The module's records (shapes, slice bounds...) and GPU devices remember their hash (they key
the per-fusion memos): a remembered hash must agree with equality, and a copy sent to another
process (a pickle) must hash afresh there, since a string's hash differs between processes."""

from __future__ import annotations

import pickle
import subprocess
import sys
from dataclasses import replace

from hlo_index.analyses.gpu_devices import RTX_A6000, GpuDevice
from hlo_index.hlo.model import Layout, Shape, SliceDim


def _shape() -> Shape:
    return Shape("bf16", (64512,), (False,), Layout((0,)))


def test_equal_shapes_hash_alike_and_differing_ones_are_unequal() -> None:
    a, b = _shape(), _shape()
    assert a is not b
    hash(a)  # a's hash remembered before b's is computed
    assert a == b and hash(a) == hash(b)
    other = Shape("bf16", (3072,), (False,), Layout((0,)))
    assert other != a
    assert len({a, b, other}) == 2


def test_equal_slice_bounds_hash_alike() -> None:
    a, b = SliceDim(4, 5, 1), SliceDim(4, 5, 1)
    hash(a)
    assert a == b and hash(a) == hash(b)
    assert SliceDim(5, 6, 1) != a
    assert len({(a,), (b,), (SliceDim(5, 6, 1),)}) == 2


def test_a_shape_remembers_no_field_of_its_own() -> None:
    a = _shape()
    hash(a)
    assert "_hash" not in repr(a)
    copy = pickle.loads(pickle.dumps(a))
    assert copy == a and hash(copy) == hash(a)


def test_equal_devices_hash_alike() -> None:
    fresh = GpuDevice()
    hash(RTX_A6000)
    assert fresh == RTX_A6000 and hash(fresh) == hash(RTX_A6000)
    renamed = replace(RTX_A6000, name="another")
    assert renamed != RTX_A6000
    assert len({RTX_A6000, fresh, renamed}) == 2


def test_a_pickled_device_or_shape_hashes_afresh_in_another_process() -> None:
    hash(RTX_A6000)
    shape = _shape()
    hash(shape)
    payload = pickle.dumps((RTX_A6000, shape))
    # the child's string hashes are seeded differently: a remembered hash would be the parent's
    check = (
        "import pickle, sys\n"
        "from hlo_index.analyses.gpu_devices import GpuDevice\n"
        "from hlo_index.hlo.model import Layout, Shape\n"
        "device, shape = pickle.loads(sys.stdin.buffer.read())\n"
        "assert hash(device) == hash(GpuDevice())\n"
        "assert hash(shape) == hash(Shape('bf16', (64512,), (False,), Layout((0,))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", check], input=payload, capture_output=True, env=None, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()
