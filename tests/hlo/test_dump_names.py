"""XLA's dump file names, read once for every reader: the target, the cost's device, diff's
pairing and the target config beside a dump. The expected fields are written out by hand from
the names (XLA's ``module_NNNN.<module name>.<stage>.txt``)."""

from __future__ import annotations

import pytest

from hlo_index.analyses.cost.target_cost import capability_of
from hlo_index.analyses.gpu_target import AUTO, config_path_beside, detect_target
from hlo_index.hlo.dump_names import read_dump_name
from hlo_index.hlo.loader import parse_checked
from hlo_index.report.diff_inputs import dump_key

# name -> (platform, capability, ROCm architecture, stage, number, module name)
NAMES = {
    "JAX-Toolbox.nsys-jax.pax_fsdp4_4proc_proc0.module_0040.pjit__wrapped_step_fn.sm_8.0_gpu_after_optimizations"
    ".txt.gz": ("gpu", (8, 0), None, "after_optimizations", None, None),
    "module_0040.jit_step.sm_9.0a_gpu_after_optimizations.txt": (
        "gpu",
        (9, 0),
        None,
        "after_optimizations",
        40,
        "jit_step",
    ),
    "module_0012.jit_train.sm_10.0_gpu_after_optimizations.txt": (
        "gpu",
        (10, 0),
        None,
        "after_optimizations",
        12,
        "jit_train",
    ),
    "scale-your-amd.lhs_on.jit_lhs_on.gfx950_gpu_after_optimizations.txt": (
        "gpu",
        None,
        "gfx950",
        "after_optimizations",
        None,
        None,
    ),
    "module_0007.jit_f.gfx90a_gpu_after_optimizations.txt": ("gpu", None, "gfx90a", "after_optimizations", 7, "jit_f"),
    "xla_hlo_dump_parse.tf_resnet.module_0039.gpu_after_optimizations.txt": (
        "gpu",
        None,
        None,
        "after_optimizations",
        None,
        None,
    ),
    "module_0001.jit_f.cpu_after_optimizations.txt": ("cpu", None, None, "after_optimizations", 1, "jit_f"),
    "module_0003.pjit_step.tpu_after_optimizations.txt": ("tpu", None, None, "after_optimizations", 3, "pjit_step"),
    "module_0070.tf_rocm.after_optimizations.txt": (None, None, None, "after_optimizations", 70, "tf_rocm"),
    "module_0040.pjit__wrapped_step_fn.before_optimizations.txt.gz": (
        None,
        None,
        None,
        "before_optimizations",
        40,
        "pjit__wrapped_step_fn",
    ),
    "model_gpu_after_optimizations.txt": ("gpu", None, None, "after_optimizations", None, None),
}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_a_dump_name_is_read_field_by_field(name):
    read = read_dump_name("some/dir/" + name)
    assert read is not None
    got = (read.platform, read.capability, read.rocm_arch, read.stage, read.number, read.module_name)
    assert got == NAMES[name]
    assert read.stem.startswith("some/dir/") and name.startswith(read.stem.removeprefix("some/dir/"))


@pytest.mark.parametrize("name", ["model.hlo", "module_0001.jit_f.txt", "after_optimizations_notes/model.hlo"])
def test_a_name_without_a_stage_is_no_dump_name(name):
    assert read_dump_name(name) is None
    assert config_path_beside(name) is None


def test_only_the_file_name_counts_not_its_directories():
    # a directory named after a compute capability says nothing of the file in it
    assert read_dump_name("runs/sm_8.0_gpu_after_optimizations/model.hlo") is None
    module = parse_checked("HloModule m\nENTRY e {\n  ROOT p = f32[4]{0} parameter(0)\n}\n", "x")[0].module
    module.source = "runs/sm_8.0_gpu_after_optimizations/model.hlo"
    assert capability_of(module) is None
    assert detect_target(module, AUTO).target == "cpu"


@pytest.mark.parametrize(
    "name, config",
    [
        (
            "d/module_0040.jit_step.sm_9.0a_gpu_after_optimizations.txt",
            "d/module_0040.jit_step.gpu_target_config.pbtxt",
        ),
        ("d/module_0007.jit_f.gfx90a_gpu_after_optimizations.txt", "d/module_0007.jit_f.gpu_target_config.pbtxt"),
        ("d/module_0040.jit_step.before_optimizations.txt", "d/module_0040.jit_step.gpu_target_config.pbtxt"),
    ],
)
def test_the_target_config_beside_a_dump_shares_its_name_up_to_the_stage(name, config):
    assert str(config_path_beside(name)) == config


@pytest.mark.parametrize(
    "name, key",
    [
        ("module_0040.jit_step.sm_9.0a_gpu_after_optimizations.txt", "jit_step.after_optimizations"),
        ("module_0007.jit_step.gfx90a_gpu_after_optimizations.txt", "jit_step.after_optimizations"),
        ("module_0001.jit_step.cpu_after_optimizations.txt.gz", "jit_step.after_optimizations"),
        ("module_0001.jit_step.before_optimizations.txt", "jit_step.before_optimizations"),
        ("module_0001.jit_step.txt", "jit_step"),
        ("model.hlo", "the_module"),
    ],
)
def test_diff_pairs_dumps_by_the_name_without_number_and_backend(name, key):
    assert dump_key("d/" + name, "the_module") == key
