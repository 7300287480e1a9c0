"""Every malformed input is reported naming the file, line and field, never as a traceback:
model, GPU, server and cloud catalogs, and command-line values.

Each malformed catalog is a valid entry copied from the shipped catalogs with one thing broken,
so a failure here means the message is wrong, not that the test's YAML is.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import cli
from planner.errors import CatalogError, MissingDependencyError, PlannerError
from planner.inputs.catalog import (
    DEFAULT_CLOUDS,
    DEFAULT_GPUS,
    DEFAULT_MODELS,
    DEFAULT_SERVERS,
    load_clouds,
    load_gpus,
    load_servers,
)

FOLDER = object()  # content of a case whose path is a folder instead of a file


def _entry(path: Path, entry_id: str) -> str:
    """The text of one shipped entry: its id line up to the next blank line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"  {entry_id}:")
    end = lines.index("", start)
    return "\n".join(lines[start:end])


LLAMA = _entry(DEFAULT_MODELS, "llama-3.1-8b")
MIXTRAL = _entry(DEFAULT_MODELS, "mixtral-8x7b")
GEMMA = _entry(DEFAULT_MODELS, "gemma-2-9b")  # sliding_window and layer_types
DEEPSEEK = _entry(DEFAULT_MODELS, "deepseek-v3")  # MLA
A100 = _entry(DEFAULT_GPUS, "a100-40gb-sxm")
HGX_H100 = _entry(DEFAULT_SERVERS, "hgx-h100-8")
MI300X_SERVER = _entry(DEFAULT_SERVERS, "mi300x-8")
P5 = _entry(DEFAULT_CLOUDS, "aws-p5.48xlarge")  # 68.80 on demand, 40.59 and 24.77 reserved


def models(*entries: str) -> str:
    return "models:\n" + "\n\n".join(entries) + "\n"


def gpus(*entries: str) -> str:
    return "gpus:\n" + "\n\n".join(entries) + "\n"


def servers(*entries: str) -> str:
    return "servers:\n" + "\n\n".join(entries) + "\n"


def clouds(*entries: str) -> str:
    return "clouds:\n" + "\n\n".join(entries) + "\n"


def edit(text: str, old: str, new: str) -> str:
    """Replace the one occurrence of `old`, so that a changed catalog fails loudly here."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


@dataclass(frozen=True)
class Bad:
    """A malformed catalog file and what its message must say."""

    content: str | bytes | object | None  # None: no file at all; FOLDER: a folder
    expect: tuple[str, ...]  # each must appear in the message
    line: str | None = None  # the message names the (last) line holding this text
    section: str = "models"
    absent: tuple[str, ...] = ()  # each must not appear in the message


CATALOG_CASES: dict[str, Bad] = {
    # The file as a whole.
    "yaml-syntax": Bad(models(edit(LLAMA, "hidden_size: 4096", "hidden_size: 4096: 1")),
                       ("YAML syntax error", "mapping values are not allowed", "column 22"),
                       "hidden_size: 4096: 1"),
    "tab-indentation": Bad(models(edit(LLAMA, "    hidden_size", "\thidden_size")),
                           ("YAML syntax error", "column 1", "spaces, not tab characters"),
                           "\thidden_size"),
    "empty-file": Bad("", ("is empty", "top-level 'models:'")),
    "whitespace-only": Bad("\n   \n\n", ("is empty",)),
    "comments-only": Bad("# models:\n#   llama-3.1-8b:\n\n    # nothing here\n", ("is empty",)),
    "binary-file": Bad(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", ("binary file",)),
    "missing-file": Bad(None, ("file not found",)),
    "folder": Bad(FOLDER, ("is a folder, not a file",)),
    "not-utf8": Bad(models(edit(LLAMA, '"Llama 3.1 8B"', '"Llama 3.1 8B caf\xe9"'))
                    .encode("latin-1"), ("not valid UTF-8",), "Llama 3.1 8B caf"),
    "control-character": Bad(models(edit(LLAMA, "hidden_size: 4096", "hidden_size: 40\x0796")),
                             ("control character U+0007", "column 20"), "hidden_size: 40"),
    "no-models-key": Bad("model:\n" + LLAMA + "\n",
                         ("expected a top-level 'models:' mapping", "['model']"), "model:"),
    "models-is-a-list": Bad("models:\n  - llama-3.1-8b\n",
                            ("field 'models'", "'models' must map ids to entries"), "models:"),
    "models-is-empty": Bad("models:\n", ("'models' must map ids to entries",), "models:"),
    "top-level-scalar": Bad("llama-3.1-8b\n", ("expected a top-level 'models:'", "found str")),
    "gpu-file-as-models": Bad(gpus(A100), ("top-level 'models:'", "['gpus']"), "gpus:"),
    # YAML features the catalogs do not use.
    "duplicate-model-id": Bad(models(LLAMA, LLAMA),
                              ("duplicate key 'llama-3.1-8b'", "first defined on line 2"),
                              "  llama-3.1-8b:"),
    "duplicate-field": Bad(models(edit(LLAMA, "    hidden_size: 4096",
                                       "    hidden_size: 4096\n    hidden_size: 4096")),
                           ("duplicate key 'hidden_size'", "first defined on line"),
                           "hidden_size: 4096", absent=("entry 'hidden_size'",)),
    "null-key": Bad(models(LLAMA + "\n    null: 1"), ("key None is not a name",), "null: 1"),
    "bad-tagged-value": Bad(models(edit(LLAMA, "hidden_size: 4096", "hidden_size: !!int abc")),
                            ("cannot read 'abc' as int",), "!!int abc"),
    "unknown-tag": Bad(models(edit(LLAMA, "hidden_size: 4096", "hidden_size: !big 4096")),
                       ("unsupported YAML tag '!big'",), "!big 4096"),
    "python-tag": Bad(models(edit(LLAMA, "hidden_size: 4096",
                                  "hidden_size: !!python/object/apply:os.getpid []")),
                      ("unsupported YAML tag", "python/object/apply:os.getpid"), "os.getpid"),
    "merge-key": Bad("shared: &shared {vocab_size: 128256}\n"
                     + models(edit(LLAMA, "    vocab_size: 128256", "    <<: *shared")),
                     ("merge keys (<<) are not supported",), "<<: *shared"),
    "recursive-alias": Bad("loop: &loop [*loop]\n" + models(LLAMA),
                           ("alias (*name) refers to a value that contains it",), "loop:"),
    # Entries and ids.
    "entry-not-a-mapping": Bad(models("  llama-3.1-8b:"),
                               ("entry 'llama-3.1-8b'", "must be a mapping of fields, got None"),
                               "llama-3.1-8b:"),
    "id-upper-case": Bad(models(edit(LLAMA, "  llama-3.1-8b:", "  Llama-3.1-8B:")),
                         ("entry 'Llama-3.1-8B'", "lower-case", "e.g. 'llama-3.1-8b'"),
                         "Llama-3.1-8B:"),
    "id-with-spaces": Bad(models(edit(LLAMA, "  llama-3.1-8b:", "  llama 3.1 8b:")),
                          ("entry 'llama 3.1 8b'", "lower-case", "e.g. 'llama-3.1-8b'"),
                          "llama 3.1 8b:"),
    # Fields.
    "unknown-field": Bad(models(edit(LLAMA, "num_key_value_heads:", "num_key_value_head:")),
                         ("field 'num_key_value_head'", "unknown field",
                          "did you mean 'num_key_value_heads'?"), "num_key_value_head:"),
    "missing-source": Bad(models(edit(LLAMA, LLAMA.splitlines()[2] + "\n", "")),
                          ("entry 'llama-3.1-8b'", "field 'source'", "required field is missing"),
                          "llama-3.1-8b:"),
    "missing-num-hidden-layers": Bad(models(edit(LLAMA, "    num_hidden_layers: 32\n", "")),
                                     ("entry 'llama-3.1-8b'", "field 'num_hidden_layers'",
                                      "required field is missing", "hint: add num_hidden_layers"),
                                     "llama-3.1-8b:"),
    "string-for-number": Bad(models(edit(LLAMA, "hidden_size: 4096", "hidden_size: 4k")),
                             ("field 'hidden_size'", "must be a number, got '4k'"), "4k"),
    "quoted-number": Bad(models(edit(LLAMA, "hidden_size: 4096", 'hidden_size: "4096"')),
                         ("field 'hidden_size'", "must be a number, got '4096'"), '"4096"'),
    "bool-for-number": Bad(models(edit(LLAMA, "num_hidden_layers: 32", "num_hidden_layers: yes")),
                           ("field 'num_hidden_layers'", "must be a number, got True"),
                           "num_hidden_layers: yes"),
    "negative": Bad(models(edit(LLAMA, "vocab_size: 128256", "vocab_size: -128256")),
                    ("field 'vocab_size'", "must not be negative, got -128256"), "-128256"),
    "zero": Bad(models(edit(LLAMA, "num_hidden_layers: 32", "num_hidden_layers: 0")),
                ("field 'num_hidden_layers'", "must be greater than 0, got 0"),
                "num_hidden_layers: 0"),
    "infinite": Bad(models(edit(LLAMA, "params: 8030000000", "params: .inf")),
                    ("field 'params'", "is infinite"), "params: .inf"),
    "nan": Bad(models(edit(LLAMA, "params: 8030000000", "params: .nan")),
               ("field 'params'", "is NaN"), "params: .nan"),
    "float-for-int": Bad(models(edit(LLAMA, "num_hidden_layers: 32", "num_hidden_layers: 32.5")),
                         ("field 'num_hidden_layers'", "must be a whole number, got 32.5"),
                         "num_hidden_layers: 32.5"),
    "text-expected": Bad(models(edit(LLAMA, LLAMA.splitlines()[1], "    name: 8")),
                         ("field 'name'", "must be text, got 8"), "name: 8"),
    "bool-expected": Bad(models(edit(LLAMA, "tie_word_embeddings: false",
                                     'tie_word_embeddings: "yes"')),
                         ("field 'tie_word_embeddings'", "must be true or false, got 'yes'"),
                         "tie_word_embeddings:"),
    # Shapes that cannot be right.
    "heads-not-divisible-by-kv": Bad(models(edit(LLAMA, "num_key_value_heads: 8",
                                                 "num_key_value_heads: 5")),
                                     ("field 'num_key_value_heads'",
                                      "32 attention heads are not divisible by 5 KV heads"),
                                     "num_key_value_heads: 5"),
    "hidden-not-divisible-by-heads": Bad(models(edit(LLAMA, "hidden_size: 4096",
                                                     "hidden_size: 4100")),
                                         ("field 'hidden_size'",
                                          "hidden_size 4100 is not divisible by 32 heads"),
                                         "hidden_size: 4100"),
    "layer-types-wrong-length": Bad(models(LLAMA + "\n    layer_types: [full_attention]"),
                                    ("field 'layer_types'",
                                     "lists 1 layers but num_hidden_layers is 32"),
                                    "layer_types:"),
    "layer-types-unknown-kind": Bad(models(LLAMA + "\n    layer_types: [full_attention, "
                                           "global_attention]"),
                                    ("field 'layer_types'", "layer 1 has type 'global_attention'",
                                     "sliding_attention"), "layer_types:"),
    "layer-types-not-a-list": Bad(models(LLAMA + "\n    layer_types: full_attention"),
                                  ("field 'layer_types'", "must be a list"), "layer_types:"),
    "sliding-without-window": Bad(models(edit(GEMMA, "    sliding_window: 4096\n", "")),
                                  ("entry 'gemma-2-9b'", "field 'layer_types'",
                                   "sliding_attention layers but no sliding_window"),
                                  "layer_types:"),
    "moe-top-k-above-experts": Bad(models(edit(MIXTRAL, "num_experts_per_tok: 2",
                                               "num_experts_per_tok: 9")),
                                   ("entry 'mixtral-8x7b'", "field 'num_experts_per_tok'",
                                    "between 1 and 8"), "num_experts_per_tok: 9"),
    "active-above-total": Bad(models(edit(MIXTRAL, "active_params: 12900000000",
                                          "active_params: 129000000000")),
                              ("field 'active_params'", "exceeds params"), "active_params:"),
    "mla-incomplete": Bad(models(edit(DEEPSEEK, "    v_head_dim: 128", "")),
                          ("entry 'deepseek-v3'", "field 'kv_lora_rank'", "needs v_head_dim"),
                          "kv_lora_rank:"),
    # GPU catalog.
    "gpu-missing-price-date": Bad(gpus(edit(A100, '    price_date: "2024-12"\n', "")),
                                  ("entry 'a100-40gb-sxm'", "field 'price_date'",
                                   "required field is missing"), "a100-40gb-sxm:", "gpus"),
    "gpu-bad-price-date": Bad(gpus(edit(A100, '"2024-12"', '"Dec 2024"')),
                              ("field 'price_date'", "must be a date YYYY-MM, got 'Dec 2024'"),
                              "price_date:", "gpus"),
    "gpu-price-month-13": Bad(gpus(edit(A100, '"2024-12"', '"2024-13"')),
                              ("field 'price_date'", "got '2024-13'"), "price_date:", "gpus"),
    "gpu-impossible-date": Bad(gpus(edit(A100, '"2024-12"', "2024-12-41")),
                               ("cannot read '2024-12-41' as timestamp",), "price_date:", "gpus"),
    "gpu-fractional-gpus-per-node": Bad(gpus(edit(A100, "gpus_per_node: 8", "gpus_per_node: 8.5")),
                                        ("field 'gpus_per_node'", "whole number, got 8.5"),
                                        "gpus_per_node:", "gpus"),
    "gpu-memory-with-unit": Bad(gpus(edit(A100, "memory_gb: 40", "memory_gb: 40 GB")),
                                ("field 'memory_gb'", "must be a number, got '40 GB'"),
                                "memory_gb:", "gpus"),
    "model-file-as-gpus": Bad(models(LLAMA), ("top-level 'gpus:'", "['models']"), "models:",
                              "gpus"),
}

# The servers catalog's cost fields, read by `planner size --servers`.
SERVER_CASES: dict[str, Bad] = {
    "server-vendor-not-the-gpus": Bad(servers(edit(HGX_H100, "vendor: nvidia", "vendor: amd")),
                                      ("entry 'hgx-h100-8'", "field 'vendor'",
                                       "vendor 'amd' but its GPU 'h100-sxm' is made by NVIDIA",
                                       "write vendor: nvidia"), "vendor: amd", "servers"),
    "server-unknown-vendor": Bad(servers(edit(MI300X_SERVER, "vendor: amd", "vendor: AMD")),
                                 ("field 'vendor'", "must be one of nvidia, amd, intel, got 'AMD'",
                                  "did you mean 'amd'?"), "vendor: AMD", "servers"),
    "server-unknown-fabric": Bad(servers(edit(HGX_H100, "fabric: ethernet", "fabric: roce")),
                                 ("field 'fabric'", "must be one of ethernet, infiniband, got "
                                  "'roce'"), "fabric: roce", "servers"),
    "server-negative-support": Bad(servers(edit(HGX_H100, "support_usd_per_gpu_year: 4500",
                                                "support_usd_per_gpu_year: -4500")),
                                   ("field 'support_usd_per_gpu_year'",
                                    "must not be negative, got -4500"), "-4500", "servers"),
    "server-network-with-unit": Bad(servers(edit(HGX_H100, "network_usd_per_server: 1600",
                                                 "network_usd_per_server: $1,600")),
                                    ("field 'network_usd_per_server'",
                                     "must be a number, got '$1,600'"),
                                    "network_usd_per_server: $1,600", "servers"),
    # A server that would load and then be skipped (or divide by zero) where it is sized.
    "server-zero-gpus": Bad(servers(edit(HGX_H100, "gpus_per_server: 8", "gpus_per_server: 0")),
                            ("entry 'hgx-h100-8'", "field 'gpus_per_server'",
                             "must be greater than 0, got 0", "GPUs in one server"),
                            "gpus_per_server: 0", "servers"),
    "server-negative-gpus": Bad(servers(edit(HGX_H100, "gpus_per_server: 8",
                                             "gpus_per_server: -8")),
                                ("field 'gpus_per_server'", "must not be negative, got -8"),
                                "gpus_per_server: -8", "servers"),
    "server-negative-price": Bad(servers(edit(HGX_H100, "price_usd: 360800",
                                              "price_usd: -360800")),
                                 ("entry 'hgx-h100-8'", "field 'price_usd'",
                                  "must not be negative, got -360800",
                                  "purchase price of the whole server"), "-360800", "servers"),
    "server-zero-price": Bad(servers(edit(HGX_H100, "price_usd: 360800", "price_usd: 0")),
                             ("field 'price_usd'", "must be greater than 0, got 0"),
                             "price_usd: 0", "servers"),
    "server-zero-power": Bad(servers(edit(HGX_H100, "power_kw: 10.2", "power_kw: 0")),
                             ("entry 'hgx-h100-8'", "field 'power_kw'",
                              "must be greater than 0, got 0", "maximum power"),
                             "power_kw: 0", "servers"),
    "server-zero-rack-units": Bad(servers(edit(HGX_H100, "rack_units: 8", "rack_units: 0")),
                                  ("field 'rack_units'", "must be greater than 0, got 0"),
                                  "rack_units: 0", "servers"),
    "server-price-with-unit": Bad(servers(edit(HGX_H100, "price_usd: 360800",
                                               "price_usd: $360k")),
                                  ("field 'price_usd'", "must be a number, got '$360k'"),
                                  "price_usd: $360k", "servers"),
}

# The clouds catalog: each case is the shipped AWS p5 offer with one thing broken.
CLOUD_CASES: dict[str, Bad] = {
    "cloud-unknown-gpu": Bad(clouds(edit(P5, "gpu: h100-sxm", "gpu: h100-sxm5")),
                             ("entry 'aws-p5.48xlarge'", "field 'gpu'", "unknown GPU id "
                              "'h100-sxm5'", "did you mean 'h100-sxm'?"), "gpu: h100-sxm5",
                             "clouds"),
    "cloud-negative-price": Bad(clouds(edit(P5, "on_demand_usd_per_hour: 68.80",
                                            "on_demand_usd_per_hour: -68.80")),
                                ("field 'on_demand_usd_per_hour'",
                                 "must not be negative, got -68.8"), "-68.80", "clouds"),
    "cloud-zero-price": Bad(clouds(edit(P5, "reserved_3y_usd_per_hour: 24.77",
                                        "reserved_3y_usd_per_hour: 0")),
                            ("field 'reserved_3y_usd_per_hour'", "must be greater than 0, got 0"),
                            "reserved_3y_usd_per_hour: 0", "clouds"),
    "cloud-1y-above-on-demand": Bad(clouds(edit(P5, "reserved_1y_usd_per_hour: 40.59",
                                                "reserved_1y_usd_per_hour: 70.00")),
                                    ("field 'reserved_1y_usd_per_hour'", "the 1-year price 70.0 "
                                     "is above the on-demand price 68.8", "per instance-hour"),
                                    "reserved_1y_usd_per_hour: 70.00", "clouds"),
    "cloud-3y-above-1y": Bad(clouds(edit(P5, "reserved_3y_usd_per_hour: 24.77",
                                         "reserved_3y_usd_per_hour: 45.00")),
                             ("field 'reserved_3y_usd_per_hour'", "the 3-year price 45.0 is "
                              "above the 1-year price 40.59", "terms are not swapped"),
                             "reserved_3y_usd_per_hour: 45.00", "clouds"),
    "cloud-per-gpu-price-as-reserved": Bad(clouds(edit(P5, "on_demand_usd_per_hour: 68.80",
                                                       "on_demand_usd_per_hour: 8.60")),
                                           ("field 'reserved_1y_usd_per_hour'",
                                            "the 1-year price 40.59 is above the on-demand "
                                            "price 8.6"), "reserved_1y_usd_per_hour:", "clouds"),
    "cloud-missing-price-date": Bad(clouds(edit(P5, '    price_date: "2025-11"\n', "")),
                                    ("entry 'aws-p5.48xlarge'", "field 'price_date'",
                                     "required field is missing", "add price_date: when the "
                                     "on-demand price was true, YYYY-MM"), "aws-p5.48xlarge:",
                                    "clouds"),
    "cloud-bad-price-date": Bad(clouds(edit(P5, '"2025-11"', '"Nov 2025"')),
                                ("field 'price_date'", "must be a date YYYY-MM, got 'Nov 2025'",
                                 "e.g. '2026-03'"), "price_date:", "clouds"),
    "cloud-missing-source": Bad(clouds(edit(P5, P5.splitlines()[-2] + "\n", "")),
                                ("entry 'aws-p5.48xlarge'", "field 'source'",
                                 "required field is missing"), "aws-p5.48xlarge:", "clouds"),
    "cloud-zero-gpus": Bad(clouds(edit(P5, "gpus_per_instance: 8", "gpus_per_instance: 0")),
                           ("field 'gpus_per_instance'", "must be greater than 0, got 0"),
                           "gpus_per_instance: 0", "clouds"),
    "cloud-negative-gpus": Bad(clouds(edit(P5, "gpus_per_instance: 8",
                                           "gpus_per_instance: -8")),
                               ("field 'gpus_per_instance'", "must not be negative, got -8"),
                               "gpus_per_instance: -8", "clouds"),
    "cloud-fractional-gpus": Bad(clouds(edit(P5, "gpus_per_instance: 8",
                                             "gpus_per_instance: 0.5")),
                                 ("field 'gpus_per_instance'", "must be a whole number, got 0.5"),
                                 "gpus_per_instance: 0.5", "clouds"),
    "cloud-unknown-field": Bad(clouds(edit(P5, "reserved_1y_usd_per_hour:",
                                           "reserved_1yr_usd_per_hour:")),
                               ("field 'reserved_1yr_usd_per_hour'", "unknown field",
                                "did you mean 'reserved_1y_usd_per_hour'?"),
                               "reserved_1yr_usd_per_hour:", "clouds"),
    "servers-file-as-clouds": Bad(servers(HGX_H100), ("top-level 'clouds:'", "['servers']"),
                                  "servers:", "clouds"),
}

ARGUMENT_CASES: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "unknown-model": (["--model", "llama-3.1-9b"],
                      ("--model llama-3.1-9b", "unknown model", "did you mean 'llama-3.1-8b'?")),
    "empty-model": (["--model", ""], ("unknown model", "known: ", "llama-3.1-8b")),
    "unknown-gpu": (["--gpu", "h100-sxm5"],
                    ("--gpu h100-sxm5", "unknown GPU", "did you mean 'h100-sxm'?")),
    "unknown-weights": (["--weights", "fp7"],
                        ("--weights fp7", "unknown weight format", "did you mean 'fp8'?")),
    "unknown-kv": (["--kv", "int3"], ("--kv int3", "unknown KV-cache format")),
    "context-zero": (["--context", "0"], ("--context 0", "whole number greater than 0")),
    "batch-negative": (["--batch", "-1"], ("--batch -1", "whole number greater than 0")),
    "prompt-zero": (["--prompt", "0"], ("--prompt 0", "whole number greater than 0")),
    "tp-zero": (["--tp", "0"], ("--tp 0", "whole number greater than 0")),
    "tp-not-dividing-heads": (["--tp", "3"], ("--tp 3", "llama-3.1-8b has 32 attention heads",
                                              "use one of 1, 2, 4, 8, 16, 32")),
    "tp-not-dividing-kv-heads": (["--model", "mixtral-8x22b", "--tp", "6"],
                                 ("--tp 6", "mixtral-8x22b has 8 KV heads")),
    "tp-not-a-number": (["--tp", "abc"], ("Invalid value for '--tp'", "'abc'")),
    "set-unknown-name": (["--set", "gpu_memory_utilisation=0.8"],
                         ("--set gpu_memory_utilisation", "unknown assumption",
                          "did you mean 'gpu_memory_utilization'?")),
    "set-retired-name": (["--set", "step_overhead_us_per_layer=30"],
                         ("--set step_overhead_us_per_layer", "unknown assumption",
                          "replaced by kernel_floor_us")),
    "set-out-of-range": (["--set", "gpu_memory_utilization=1.5"],
                         ("--set gpu_memory_utilization=1.5", "out of range",
                          "between 0.05 and 1")),
    "set-not-a-number": (["--set", "gpu_memory_utilization=abc"],
                         ("--set gpu_memory_utilization=abc", "not a number")),
    "set-nan": (["--set", "bandwidth_efficiency=nan"],
                ("--set bandwidth_efficiency=nan", "finite")),
    "set-bad-choice": (["--set", "memory_basis=foo"],
                       ("--set memory_basis=foo", "must be one of engine, reported, marketed")),
    "set-without-equals": (["--set", "gpu_memory_utilization"],
                           ("--set gpu_memory_utilization:", "expected NAME=VALUE")),
    "set-format-bytes": (["--set", "bytes_per_param_fp8=9"],
                         ("--set bytes_per_param_fp8=9", "at most 8")),
    # catalog fields calc does not read are checked all the same, as `size` checks them
    "set-server-price-with-unit": (["--set", "servers.hgx-h100-8.price_usd=$300k"],
                                   ("--set servers.hgx-h100-8.price_usd=$300k",
                                    "must be a number, got '$300k'",
                                    "purchase price of the whole server")),
    "set-negative-workload-rate": (["--set", "workloads.chat-assistant-70b.rate_rps=-5"],
                                   ("--set workloads.chat-assistant-70b.rate_rps=-5",
                                    "must not be negative, got -5")),
    "set-unknown-catalog": (["--set", "server.hgx-h100-8.price_usd=300000"],
                            ("unknown catalog 'server'", "did you mean 'servers'?")),
    "set-unknown-server-field": (["--set", "servers.hgx-h100-8.price=300000"],
                                 ("--set servers.hgx-h100-8.price", "not a field --set can change",
                                  "did you mean 'price_usd'?")),
    # a request longer than the context it is sized for
    "prompt-output-beyond-context": (["--prompt", "30000", "--output", "4000", "--context",
                                      "32768"],
                                     ("--prompt 30,000 + --output 4,000 = 34,000 tokens is "
                                      "beyond --context 32,768", "give --context 34000 or more")),
    "prompt-beyond-context": (["--prompt", "30000", "--context", "8192"],
                              ("--prompt 30,000 is beyond --context 8,192",
                               "give --context 30000 or more")),
}


def _error(args: list[str]) -> str:
    """Run the CLI in-process; return the message a user would see, checking it failed cleanly."""
    result = CliRunner().invoke(cli, args)
    exc = result.exception
    if exc is not None and not isinstance(exc, PlannerError | SystemExit):
        pytest.fail("".join(traceback.format_exception(*result.exc_info)))  # type: ignore[misc]
    assert result.exit_code != 0, result.output
    message = str(exc) if isinstance(exc, PlannerError) else result.output
    assert "Traceback" not in message and "Traceback" not in result.output
    return message


def _line_number(content: str | bytes, marker: str) -> int:
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    numbers = [i for i, line in enumerate(text.splitlines(), 1) if marker in line]
    assert numbers, f"{marker!r} is on no line of the case"
    return numbers[-1]


def _write(path: Path, content: str | bytes | object | None) -> None:
    if content is FOLDER:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")


def test_cases_start_from_valid_entries(tmp_path: Path) -> None:
    """The unbroken entries load and compute, so each case's error comes from its one change."""
    model_file, gpu_file = tmp_path / "models.yaml", tmp_path / "gpus.yaml"
    model_file.write_text(models(LLAMA, MIXTRAL, GEMMA, DEEPSEEK), encoding="utf-8")
    gpu_file.write_text(gpus(A100), encoding="utf-8")
    for model in ("llama-3.1-8b", "mixtral-8x7b", "gemma-2-9b", "deepseek-v3"):
        result = CliRunner().invoke(cli, ["calc", "--model", model, "--gpu", "a100-40gb-sxm",
                                          "--models", str(model_file), "--gpus", str(gpu_file)])
        assert result.exit_code == 0, (model, result.output, result.exception)


def test_server_and_cloud_cases_start_from_valid_entries(tmp_path: Path) -> None:
    """The unbroken server and cloud entries load, so each case's error is its one change."""
    shipped = load_gpus()
    (tmp_path / "servers.yaml").write_text(servers(HGX_H100, MI300X_SERVER), encoding="utf-8")
    assert set(load_servers(tmp_path / "servers.yaml", shipped).entries) == {"hgx-h100-8",
                                                                              "mi300x-8"}
    (tmp_path / "clouds.yaml").write_text(clouds(P5), encoding="utf-8")
    offer = load_clouds(tmp_path / "clouds.yaml", shipped).entries["aws-p5.48xlarge"]
    assert offer.number("reserved_3y_usd_per_hour") == 24.77


@pytest.mark.parametrize("case", list(CATALOG_CASES.values()), ids=list(CATALOG_CASES))
def test_malformed_catalog_is_reported(tmp_path: Path, case: Bad) -> None:
    path = tmp_path / f"{case.section}.yaml"
    _write(path, case.content)
    message = _error(["calc", "--model", "llama-3.1-8b", "--gpu", "a100-40gb-sxm",
                      f"--{case.section}", str(path)])
    _check_message(message, path, case)


@pytest.mark.parametrize("case", list(SERVER_CASES.values()), ids=list(SERVER_CASES))
def test_malformed_server_catalog_is_reported(tmp_path: Path, case: Bad) -> None:
    path = tmp_path / "servers.yaml"
    _write(path, case.content)
    _check_message(_error(["size", "--servers", str(path)]), path, case)


@pytest.mark.parametrize("case", list(CLOUD_CASES.values()), ids=list(CLOUD_CASES))
def test_malformed_cloud_catalog_is_reported(tmp_path: Path, case: Bad) -> None:
    path = tmp_path / "clouds.yaml"
    _write(path, case.content)
    with pytest.raises(CatalogError) as caught:
        load_clouds(path, load_gpus())
    _check_message(str(caught.value), path, case)


def _check_message(message: str, path: Path, case: Bad) -> None:
    assert message.startswith(str(path)), message
    for fragment in case.expect:
        assert fragment in message, f"{fragment!r} not in:\n{message}"
    for fragment in case.absent:
        assert fragment not in message, f"{fragment!r} in:\n{message}"
    if case.line is not None:
        assert isinstance(case.content, str | bytes)
        number = _line_number(case.content, case.line)
        assert re.search(rf"\bline {number}\b", message), f"line {number} not in:\n{message}"


@pytest.mark.parametrize("args, expect", list(ARGUMENT_CASES.values()), ids=list(ARGUMENT_CASES))
def test_bad_argument_is_reported(args: list[str], expect: tuple[str, ...]) -> None:
    defaults = {"--model": "llama-3.1-8b", "--gpu": "h100-sxm"}
    for option, value in defaults.items():
        if option not in args:
            args = [*args, option, value]
    message = _error(["calc", *args])
    for fragment in expect:
        assert fragment in message, f"{fragment!r} not in:\n{message}"


def _planner(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PLANNER_DEBUG"}
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


@pytest.mark.parametrize("name", ["yaml-syntax", "missing-file", "bad-tagged-value",
                                  "recursive-alias", "gpu-impossible-date"])
def test_real_entry_point_exits_1_without_traceback(tmp_path: Path, name: str) -> None:
    case = CATALOG_CASES[name]
    path = tmp_path / f"{case.section}.yaml"
    _write(path, case.content)
    done = _planner("calc", "--model", "llama-3.1-8b", "--gpu", "a100-40gb-sxm",
                    f"--{case.section}", str(path))
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith(f"Error: {path}"), done.stderr
    assert "Traceback" not in done.stderr and "Internal error" not in done.stderr


# A command that only loads a clouds catalog, run through the real entry point (main), as no
# command reads the clouds catalog yet: its errors reach the user like every catalog error.
CLOUDS_ENTRY = """
import sys, click
from planner import cli
from planner.inputs.catalog import load_clouds, load_gpus

@cli.cli.command("load-clouds")
@click.argument("path")
def load(path):
    load_clouds(path, load_gpus())

sys.argv = ["planner", "load-clouds", sys.argv[1]]
cli.main()
"""


@pytest.mark.parametrize("name", ["cloud-unknown-gpu", "cloud-1y-above-on-demand",
                                  "cloud-missing-source"])
def test_cloud_errors_exit_1_without_traceback(tmp_path: Path, name: str) -> None:
    case = CLOUD_CASES[name]
    path = tmp_path / "clouds.yaml"
    _write(path, case.content)
    env = {k: v for k, v in os.environ.items() if k != "PLANNER_DEBUG"}
    done = subprocess.run([sys.executable, "-c", CLOUDS_ENTRY, str(path)], capture_output=True,
                          text=True, env=env, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith(f"Error: {path}"), done.stderr
    assert case.expect[-1] in done.stderr
    assert "Traceback" not in done.stderr and "Internal error" not in done.stderr


def test_server_error_exits_1_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "servers.yaml"
    _write(path, SERVER_CASES["server-vendor-not-the-gpus"].content)
    done = _planner("size", "--servers", str(path))
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"Error: {path}"), done.stderr
    assert "made by NVIDIA" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("args, expect, code", [
    (["--model", "llama-3.1-9b"], "did you mean 'llama-3.1-8b'?", 1),
    (["--model", "llama-3.1-8b", "--tp", "3"], "--tp 3", 1),
    (["--model", "llama-3.1-8b", "--set", "gpu_memory_utilization=1.5"], "out of range", 1),
    (["--model", "llama-3.1-8b", "--tp", "abc"], "Invalid value for '--tp'", 2),
], ids=["unknown-model", "tp-3", "set-out-of-range", "tp-not-a-number"])
def test_real_entry_point_rejects_arguments(args: list[str], expect: str, code: int) -> None:
    done = _planner("calc", "--gpu", "h100-sxm", *args)
    assert done.returncode == code, done.stderr
    assert expect in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize("args, expect", [
    ([], "pass what the log does not print, as the engine ran: --tp N, --weights FORMAT"),
    (["--tp", "4", "--weights", "fp9"], "--weights fp9: unknown weight format"),
    (["--set", "gpu_memory_utilization=2"], "out of range"),
], ids=["weights-cannot-fit", "unknown-format", "set-out-of-range"])
def test_calibrate_rejects_settings_without_traceback(args: list[str], expect: str) -> None:
    log = Path(__file__).parent / "data" / "logs" / "sglang-h100x4-qwen3-235b-fp8-tp4.log"
    done = _planner("calibrate", str(log), "--model", "qwen3-235b-a22b", "--gpu", "h100-sxm",
                    *args)
    assert done.returncode == 1, done.stderr
    assert expect in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


# Runs the planner as `python -m planner` does, with one package made impossible to import, as
# on a machine where `pip install -e .` was skipped or failed half-way.
WITHOUT_PACKAGE = """
import sys
import time

MISSING = sys.argv[1]

class Missing:
    def find_spec(self, name, path=None, target=None):
        if name == MISSING or name.startswith(MISSING + "."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

for module in [m for m in sys.modules if m == MISSING or m.startswith(MISSING + ".")]:
    del sys.modules[module]
sys.meta_path.insert(0, Missing())
sys.argv = ["planner", *sys.argv[2:]]
from planner.__main__ import main
main()
"""


@pytest.mark.parametrize("module, package, args", [
    ("click", "click", ["--version"]),
    ("yaml", "PyYAML", ["list", "models"]),
    ("openpyxl", "openpyxl", ["diff", "missing.xlsx"]),
    ("jinja2", "Jinja2", ["build", "--grid", "GRID", "--out", "OUT", "-q"]),
])
def test_missing_dependency_is_named_not_a_bug(tmp_path: Path, module: str, package: str,
                                               args: list[str]) -> None:
    """A package the planner needs that is not installed is reported as such, with the pip
    command, exit 1: not as an internal error or a traceback."""
    grid = tmp_path / "grid.yaml"
    grid.write_text("grid:\n  models: [llama-3.1-8b]\n  gpus: [h100-sxm]\n  weights: [bf16]\n"
                    "  kv: [bf16]\n  context: [8192]\n  batch: [1]\n  tp: [1]\n")
    args = [str(grid) if a == "GRID" else str(tmp_path / "out") if a == "OUT" else a
            for a in args]
    env = {k: v for k, v in os.environ.items() if k != "PLANNER_DEBUG"}
    done = subprocess.run([sys.executable, "-c", WITHOUT_PACKAGE, module, *args],
                          capture_output=True, text=True, env=env, timeout=120, check=False,
                          cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert f"the planner needs the Python package {package}" in done.stderr, done.stderr
    assert "pip install -e ." in done.stderr
    assert "Traceback" not in done.stderr and "bug in the planner" not in done.stderr


def test_a_missing_module_of_the_planner_itself_is_still_a_bug() -> None:
    assert MissingDependencyError.from_import_error(
        ModuleNotFoundError("No module named 'planner.nowhere'", name="planner.nowhere")) is None
    old = MissingDependencyError.from_import_error(
        ImportError("cannot import name 'WriteOnlyCell' from 'openpyxl.cell'",
                    name="openpyxl.cell"))
    assert old is not None and "a newer openpyxl" in str(old)


@pytest.mark.parametrize("setting, expect", [
    ("servers.hgx-h100-8.price_usd=$300k", "must be a number, got '$300k'"),
    ("gpus.h100-sxm.price_per_hour_usd=-2", "must not be negative, got -2"),
    ("gpu_memory_utilization=1.5", "out of range"),
], ids=["server-price-with-unit", "negative-gpu-price", "assumption-out-of-range"])
def test_set_is_checked_alike_in_every_command(tmp_path: Path, setting: str,
                                                expect: str) -> None:
    """One --set value, one message, whichever command is given it (and before any work)."""
    log = Path(__file__).parent / "data" / "logs" / "sglang-h100x4-qwen3-235b-fp8-tp4.log"
    commands = {
        "calc": ["calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm"],
        "size": ["size"],
        "build": ["build", "--out", str(tmp_path / "out")],
        "simulate": ["simulate", "--workload", "chat-assistant-70b"],
        "calibrate": ["calibrate", str(log), "--model", "qwen3-235b-a22b", "--gpu", "h100-sxm"],
    }
    messages = {name: _error([*args, "--set", setting]) for name, args in commands.items()}
    assert all(expect in m for m in messages.values()), messages
    assert len(set(messages.values())) == 1, messages
    assert not (tmp_path / "out").exists()


def _grid(tmp_path: Path, tp: str, view: str = "",
          models: str = "[llama-3.1-8b, qwen3-8b]") -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(f"grid:\n  models: {models}\n  gpus: [h100-sxm]\n"
                    "  weights: [bf16]\n  kv: [bf16]\n  context: [8192]\n  batch: [1]\n"
                    f"  tp: {tp}\n" + view, encoding="utf-8")
    return path


def test_a_grid_that_yields_no_configuration_is_refused(tmp_path: Path) -> None:
    """tp: [3] splits no model's heads: nothing would be built, so the build says so, at the
    tp axis, with each reason, and exits 1 leaving no output folder."""
    path = _grid(tmp_path, "[3]")
    message = _error(["build", "--grid", str(path), "--out", str(tmp_path / "out")])
    assert message.startswith(f"{path}, line 8, entry 'grid', field 'tp': the grid yields no "
                              "configuration, so there is nothing to build"), message
    assert "llama-3.1-8b has 32 attention heads, which 3 ranks cannot split evenly" in message
    assert "hint: use TP degrees" in message
    assert not (tmp_path / "out").exists()
    done = _planner("build", "--grid", str(path), "--out", str(tmp_path / "out"))
    assert done.returncode == 1 and "nothing to build" in done.stderr, done.stderr


def test_grid_view_takes_a_tp_the_grid_keeps(tmp_path: Path) -> None:
    """With tp: [1, 3] the rows at TP 1 are built; the view opens on TP 1, not on the TP 3
    no row has (which used to fail as '--tp 3'); a view naming TP 3 is a located error."""
    from planner.inputs.catalog import load_models
    from planner.inputs.grid import load_grid

    models, gpus = load_models(), load_gpus()
    assert load_grid(_grid(tmp_path, "[1, 3]"), models, gpus).view.tp == 1
    path = _grid(tmp_path, "[1, 3]", "view:\n  model: llama-3.1-8b\n  tp: 3\n")
    with pytest.raises(CatalogError) as caught:
        load_grid(path, models, gpus)
    assert str(caught.value).startswith(f"{path}, line 11, entry 'view', field 'tp': "
                                        "llama-3.1-8b has 32 attention heads")


def test_build_says_which_shipped_workloads_a_models_file_drops(tmp_path: Path) -> None:
    """A --models file without the shipped workloads' models builds, and says on stderr which
    workloads it left out and why, and which grid rows it skipped."""
    models_file = tmp_path / "models.yaml"
    models_file.write_text(models(LLAMA), encoding="utf-8")
    done = _planner("build", "--models", str(models_file), "--grid",
                    str(_grid(tmp_path, "[1, 3]", models="all")), "--out",
                    str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "Note: left out 1 configurations (TP does not shard the model)" in done.stderr
    assert "Note: left out 4 shipped workload(s)" in done.stderr
    assert "  chat-assistant-70b: its model llama-3.1-70b is not in models.yaml" in done.stderr
    assert "code-completion-7b" in done.stderr and "rag-8b-long-context" not in done.stderr


@pytest.mark.parametrize("out, expect", [
    ("/dev/null", "--out /dev/null: is not a folder (it is a file or a device)"),
    ("", "--out '': give a folder to write into"),
    ("/etc/hostname/plans", "--out /etc/hostname/plans: cannot be created, /etc/hostname is a "
                            "file, not a folder"),
], ids=["dev-null", "empty", "under-a-file"])
def test_build_out_is_checked_before_the_build(out: str, expect: str) -> None:
    done = _planner("build", "--out", out)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"Error: {expect}"), done.stderr
    assert "Traceback" not in done.stderr and "Internal error" not in done.stderr


def test_build_into_a_read_only_folder_is_refused_before_the_build(tmp_path: Path) -> None:
    from tests.test_import import _read_only_folder

    folder = _read_only_folder(tmp_path)
    started = time.perf_counter()
    message = _error(["build", "--out", str(folder / "plans")])
    assert message.startswith(f"--out {folder / 'plans'}: cannot write into {folder} to create "
                              "it"), message
    message = _error(["build", "--out", str(folder)])
    assert message.startswith(f"--out {folder}: cannot write into it"), message
    assert time.perf_counter() - started < 5  # refused at once, not after the build


def test_a_yaml_input_above_the_size_limit_is_refused(tmp_path: Path) -> None:
    """A 20 MB catalog is a mistake (a dump, a log) that PyYAML would take minutes over: it is
    refused at once, saying the limit, before being read."""
    from planner.inputs.yamlsource import MAX_YAML_BYTES

    path = tmp_path / "models.yaml"
    with path.open("w", encoding="utf-8") as handle:
        handle.write(models(LLAMA))
        handle.write("# " + "x" * MAX_YAML_BYTES + "\n")
    started = time.perf_counter()
    message = _error(["calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--models",
                      str(path)])
    assert time.perf_counter() - started < 5
    assert message.startswith(f"{path}: is 20.0 MB, more than the 20 MB a YAML input may be")
    assert "hint: pass a YAML file" in message
