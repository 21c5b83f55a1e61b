"""Per-GPU HLO op profiles: clock cycles per element by (opcode, element type), which XLA's
``GpuHloCostAnalysis`` counts as the flops of one element of an elementwise op.

The shipped table holds the profiles of the GPUs the named devices use (``sm_60`` P100, ``sm_70``
V100, ``sm_80`` A100, ``sm_86`` the default, ``sm_90`` H100/H200, ``sm_100`` B200): the public
figures of XLA's ``hlo_op_profiles_data.h`` (``DeviceHloInstructionProfiles`` text), one row per
opcode. ``load_profiles(path)`` reads that text format from a file a user gives, replacing the
table. A device without its own profile (XLA's sm_89 test device, ROCm) gets ``sm_86``; an
(opcode, type) absent from the profile costs 3.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .textproto import first, parse_text_proto

DEFAULT_PROFILE = "sm_86"
DEFAULT_FLOPS_PER_ELEMENT = 3

OpProfiles = Mapping[str, Mapping[str, Mapping[str, int]]]  # capability -> opcode -> type -> cycles

SHIPPED_PROFILES: OpProfiles = {
    "sm_100": {
        "add": {"f16": 7, "f32": 7, "f64": 15, "c64": 11, "c128": 15},
        "atan2": {"f16": 400, "f32": 373, "f64": 829, "c64": 6346, "c128": 13310},
        "cbrt": {"f16": 200, "f32": 180, "f64": 569},
        "cosine": {"f16": 1017, "f32": 1002, "f64": 538, "c64": 2511, "c128": 1862},
        "divide": {
            "s8": 373,
            "s16": 369,
            "s32": 306,
            "s64": 730,
            "u8": 302,
            "u16": 302,
            "u32": 125,
            "u64": 628,
            "f16": 43,
            "f32": 23,
            "f64": 483,
            "c64": 330,
            "c128": 2338,
        },
        "erf": {"f16": 161, "f32": 161, "f64": 746},
        "exponential": {"f16": 106, "f32": 82, "f64": 314, "c64": 695, "c128": 1375},
        "exponential-minus-one": {"f16": 216, "f32": 196, "f64": 385, "c64": 864, "c128": 1513},
        "log": {"f16": 102, "f32": 165, "f64": 844, "c64": 703, "c128": 3859},
        "log-plus-one": {"f16": 216, "f32": 200, "f64": 793, "c64": 664, "c128": 5985},
        "logistic": {"f16": 220, "f32": 176, "f64": 428, "c64": 2314, "c128": 5973},
        "multiply": {
            "s8": 7,
            "s16": 7,
            "s32": 3,
            "s64": 11,
            "u8": 7,
            "u16": 7,
            "u32": 3,
            "u64": 11,
            "f16": 7,
            "f32": 7,
            "f64": 15,
            "c64": 31,
            "c128": 39,
        },
        "power": {
            "s8": 153,
            "s16": 145,
            "s32": 172,
            "s64": 298,
            "u8": 153,
            "u16": 149,
            "u32": 172,
            "u64": 298,
            "f16": 451,
            "f32": 463,
            "f64": 1796,
            "c64": 5285,
            "c128": 8685,
        },
        "rsqrt": {"f16": 98, "f32": 74, "f64": 231, "c64": 2507, "c128": 5792},
        "sine": {"f16": 1006, "f32": 990, "f64": 534, "c64": 2440, "c128": 1878},
        "sqrt": {"f16": 98, "f32": 74, "f64": 294, "c64": 4271, "c128": 6602},
        "subtract": {"f16": 7, "f32": 7, "f64": 15, "c64": 11, "c128": 15},
        "tanh": {"f16": 141, "f32": 137, "f64": 459, "c64": 2444, "c128": 4519},
    },
    "sm_90": {
        "add": {"f16": 7, "f32": 7, "f64": 15, "c64": 7, "c128": 15},
        "atan2": {"f16": 451, "f32": 431, "f64": 930, "c64": 6462, "c128": 13131},
        "cbrt": {"f16": 201, "f32": 178, "f64": 586},
        "cosine": {"f16": 997, "f32": 978, "f64": 558, "c64": 2415, "c128": 1750},
        "divide": {
            "s8": 356,
            "s16": 364,
            "s32": 297,
            "s64": 685,
            "u8": 300,
            "u16": 304,
            "u32": 122,
            "u64": 629,
            "f16": 43,
            "f32": 19,
            "f64": 526,
            "c64": 498,
            "c128": 2280,
        },
        "exponential": {"f16": 102, "f32": 79, "f64": 376, "c64": 641, "c128": 1342},
        "exponential-minus-one": {"f16": 217, "f32": 190, "f64": 712, "c64": 2055, "c128": 1275},
        "log": {"f16": 182, "f32": 166, "f64": 815, "c64": 756, "c128": 2455},
        "log-plus-one": {"f16": 245, "f32": 229, "f64": 1259, "c64": 633, "c128": 2403},
        "multiply": {
            "s8": 7,
            "s16": 7,
            "s32": 3,
            "s64": 11,
            "u8": 7,
            "u16": 7,
            "u32": 3,
            "u64": 11,
            "f16": 7,
            "f32": 3,
            "f64": 15,
            "c64": 79,
            "c128": 39,
        },
        "power": {
            "s8": 122,
            "s16": 122,
            "s32": 71,
            "s64": 253,
            "u8": 122,
            "u16": 126,
            "u32": 71,
            "u64": 253,
            "f16": 526,
            "f32": 510,
            "f64": 2205,
            "c64": 5532,
            "c128": 8363,
        },
        "rsqrt": {"f16": 95, "f32": 75, "f64": 277, "c64": 3148, "c128": 5500},
        "sine": {"f16": 993, "f32": 958, "f64": 554, "c64": 2324, "c128": 1999},
        "sqrt": {"f16": 95, "f32": 75, "f64": 332, "c64": 4344, "c128": 6636},
        "subtract": {"f16": 7, "f32": 7, "f64": 15, "c64": 7, "c128": 15},
        "tanh": {"f16": 502, "f32": 467, "f64": 431, "c64": 2379, "c128": 4613},
    },
    "sm_86": {
        "add": {"f64": 97, "c128": 97},
        "atan2": {"f16": 482, "f32": 486, "f64": 3747, "c64": 5353, "c128": 39027},
        "cbrt": {"f16": 925, "f32": 867, "f64": 6339},
        "cosine": {"f16": 691, "f32": 662, "f64": 1717, "c128": 6613},
        "divide": {
            "s8": 370,
            "s16": 367,
            "s32": 306,
            "s64": 918,
            "u8": 306,
            "u16": 302,
            "u32": 115,
            "u64": 838,
            "f64": 2016,
            "c64": 687,
            "c128": 7941,
        },
        "exponential": {"f16": 108, "f32": 86, "f64": 1652, "c64": 1360, "c128": 4028},
        "exponential-minus-one": {"f16": 396, "f32": 381, "f64": 1900, "c64": 1400, "c128": 4161},
        "log": {"f16": 266, "f32": 244, "f64": 608, "c64": 950, "c128": 7599},
        "log-plus-one": {"f16": 284, "f32": 262, "f64": 2073, "c64": 842, "c128": 6962},
        "logistic": {"f16": 226, "f32": 176, "f64": 2412},
        "multiply": {"f64": 97, "c128": 270},
        "power": {
            "s8": 392,
            "s16": 396,
            "s64": 601,
            "u8": 388,
            "u16": 399,
            "u64": 604,
            "f16": 975,
            "f32": 925,
            "f64": 5511,
            "c64": 3351,
            "c128": 18205,
        },
        "rsqrt": {"f16": 97, "f32": 75, "f64": 698, "c64": 2383, "c128": 11318},
        "sine": {"f32": 662, "f64": 1789, "c128": 5878},
        "sqrt": {"f16": 97, "f32": 75, "f64": 986, "c64": 3193, "c128": 15606},
        "subtract": {"f64": 97, "c128": 97},
        "tanh": {"f16": 212, "f32": 190, "f64": 1609, "c128": 9939},
    },
    "sm_80": {
        "atan2": {"f64": 1080, "c64": 6618, "c128": 13564},
        "cbrt": {"f16": 1195, "f64": 1638},
        "cosine": {"c128": 2309},
        "divide": {"s8": 417, "s16": 468, "s64": 1094, "u8": 420, "u16": 391, "u64": 908, "f64": 831, "c128": 3037},
        "exponential-minus-one": {"f64": 572},
        "log": {"f16": 321, "f32": 259, "f64": 699, "c64": 1037, "c128": 2371},
        "log-plus-one": {"f16": 346, "f64": 1223, "c64": 1029, "c128": 2405},
        "power": {"u8": 417, "u16": 454, "u64": 744, "f32": 1221, "f64": 1861, "c64": 4131, "c128": 6054},
        "rsqrt": {"f64": 329, "c128": 3945},
        "sine": {"f64": 597, "c128": 2284},
        "sqrt": {"f16": 124, "f64": 397, "c128": 5304},
        "tanh": {"f16": 499, "f32": 504, "f64": 733, "c128": 3618},
    },
    "sm_70": {
        "add": {"s64": 3, "u64": 3, "f16": 9, "f32": 6, "f64": 15, "c64": 12, "c128": 15},
        "atan2": {"f16": 449, "f32": 406, "f64": 973, "c64": 8151, "c128": 15355},
        "cbrt": {"f16": 226, "f32": 189, "f64": 599},
        "cosine": {"f16": 425, "f32": 373, "f64": 624, "c64": 780, "c128": 1808},
        "divide": {
            "s8": 336,
            "s16": 345,
            "s32": 287,
            "s64": 685,
            "u8": 293,
            "u16": 293,
            "u32": 113,
            "u64": 599,
            "f16": 73,
            "f32": 21,
            "f64": 501,
            "c64": 480,
            "c128": 2423,
        },
        "exponential": {"f16": 128, "f32": 79, "f64": 358, "c64": 722, "c128": 1487},
        "exponential-minus-one": {"f16": 241, "f32": 205, "f64": 410, "c64": 703, "c128": 1334},
        "log": {"f16": 232, "f32": 180, "f64": 318, "c64": 758, "c128": 1805},
        "log-plus-one": {"f16": 266, "f32": 217, "f64": 633, "c64": 654, "c128": 1618},
        "multiply": {
            "s8": 9,
            "s16": 9,
            "s32": 3,
            "s64": 12,
            "u8": 9,
            "u16": 9,
            "u32": 3,
            "u64": 12,
            "f16": 9,
            "f32": 6,
            "f64": 15,
            "c64": 42,
            "c128": 45,
        },
        "power": {
            "s8": 189,
            "s16": 183,
            "s32": 104,
            "s64": 376,
            "u8": 189,
            "u16": 183,
            "u32": 104,
            "u64": 376,
            "f16": 709,
            "f32": 673,
            "f64": 2099,
            "c64": 8105,
            "c128": 9810,
        },
        "rsqrt": {"f16": 122, "f32": 76, "f64": 263, "c64": 3261, "c128": 7261},
        "sine": {"f16": 425, "f32": 373, "f64": 618, "c64": 789, "c128": 2013},
        "sqrt": {"f16": 122, "f32": 76, "f64": 324, "c64": 6282, "c128": 8237},
        "subtract": {"f16": 9, "f32": 6, "f64": 15, "c64": 12, "c128": 15},
        "tanh": {"f16": 284, "f32": 269, "f64": 406, "c64": 1924, "c128": 6343},
    },
    "sm_60": {
        "add": {
            "s8": 2,
            "s16": 2,
            "s32": 2,
            "s64": 2,
            "u8": 2,
            "u16": 2,
            "u32": 2,
            "u64": 2,
            "f16": 11,
            "f32": 11,
            "f64": 14,
            "c64": 20,
            "c128": 20,
        },
        "atan2": {"f16": 675, "f32": 663, "f64": 1169, "c64": 16282, "c128": 22278},
        "cbrt": {"f16": 233, "f32": 213, "f64": 645},
        "cosine": {"f16": 532, "f32": 494, "f64": 1427, "c64": 1128, "c128": 4302},
        "divide": {
            "s8": 426,
            "s16": 420,
            "s32": 444,
            "s64": 1018,
            "u8": 299,
            "u16": 307,
            "u32": 189,
            "u64": 888,
            "f16": 68,
            "f32": 35,
            "f64": 565,
            "c64": 760,
            "c128": 3194,
        },
        "exponential": {"f16": 142, "f32": 109, "f64": 405, "c64": 1021, "c128": 3665},
        "exponential-minus-one": {"f16": 364, "f32": 337, "f64": 544, "c64": 991, "c128": 3656},
        "log": {"f16": 325, "f32": 284, "f64": 441, "c64": 1107, "c128": 2057},
        "log-plus-one": {"f16": 373, "f32": 328, "f64": 784, "c64": 994, "c128": 1806},
        "multiply": {
            "s8": 5,
            "s16": 5,
            "s32": 14,
            "s64": 82,
            "u8": 5,
            "u16": 5,
            "u32": 14,
            "u64": 79,
            "f16": 11,
            "f32": 11,
            "f64": 14,
            "c64": 65,
            "c128": 65,
        },
        "power": {
            "s8": 216,
            "s16": 216,
            "s32": 417,
            "s64": 1569,
            "u8": 213,
            "u16": 216,
            "u32": 420,
            "u64": 1548,
            "f16": 1012,
            "f32": 988,
            "f64": 2682,
            "c64": 8335,
            "c128": 17893,
        },
        "rsqrt": {"f16": 100, "f32": 71, "f64": 355, "c64": 2158, "c128": 6135},
        "sine": {"f16": 497, "f32": 473, "f64": 1640, "c64": 1139, "c128": 4169},
        "sqrt": {"f16": 100, "f32": 71, "f64": 417, "c64": 2934, "c128": 8595},
        "subtract": {"f16": 11, "f32": 11, "f64": 14, "c64": 20, "c128": 20},
        "tanh": {"f16": 458, "f32": 426, "f64": 473, "c64": 1883, "c128": 5294},
    },
}


def profiles_from_text(text: str) -> dict[str, dict[str, dict[str, int]]]:
    """Profiles from ``DeviceHloInstructionProfiles`` text (``entries { key: "sm_86" value { ... } }``)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for entry in parse_text_proto(text).get("entries", ()):
        table = out.setdefault(str(first(entry, "key")), {})
        for row in first(entry, "value", {}).get("entries", ()):
            instruction = first(row, "instruction", {})
            element_type = str(first(first(instruction, "shape", {}), "element_type", "")).lower()
            table.setdefault(str(first(instruction, "opcode")), {})[element_type] = int(
                first(row, "clock_cycles", DEFAULT_FLOPS_PER_ELEMENT)
            )
    return out


def load_profiles(path: str) -> dict[str, dict[str, dict[str, int]]]:
    return profiles_from_text(Path(path).read_text())


def flops_per_element(
    opcode: str, element_type: str, capability: str | None, profiles: OpProfiles | None = None
) -> int:
    """XLA's ``FlopsPerElement``: the device's profile, else ``sm_86``; 3 when absent."""
    table = profiles if profiles is not None else SHIPPED_PROFILES
    profile = table.get(capability or "", None)
    if profile is None:
        profile = table.get(DEFAULT_PROFILE, {})
    return profile.get(opcode, {}).get(element_type, DEFAULT_FLOPS_PER_ELEMENT)
