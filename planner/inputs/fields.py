"""What each catalog field means: the schema of models, GPUs, servers, workloads and cloud offers
(type, help, whether required, the values a text field may take), the Hugging Face fields a
models YAML may carry and skip, and the check of one value against its field, with a located
error that says what would be right."""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass

from planner.errors import CatalogError, Location
from planner.inputs.yamlsource import Node

ID_PATTERN = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")
LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention")


@dataclass(frozen=True)
class FieldSpec:
    kind: str  # "int" | "number" | "bool" | "text" | "layers" | "ids" | "numbers"
    required: bool = False
    allow_zero: bool = False  # numbers are > 0 unless this is set
    help: str = ""
    choices: tuple[str, ...] = ()  # the values a text field may take; any text when empty
    most: float | None = None  # the largest sane value, with why in `most_why`
    most_why: str = ""
    minimum: float | None = None  # a number may go down to this (negative) value when set


# Whole numbers above this are not counts any model has, and lose precision as floats.
LARGEST_COUNT = 2**53


def _int(help: str, required: bool = False, allow_zero: bool = False,
         most: float | None = None, most_why: str = "") -> FieldSpec:
    return FieldSpec("int", required, allow_zero, help, (), most, most_why)


def _num(help: str, required: bool = False, allow_zero: bool = False) -> FieldSpec:
    return FieldSpec("number", required, allow_zero, help)


def _text(help: str, required: bool = False, choices: tuple[str, ...] = ()) -> FieldSpec:
    return FieldSpec("text", required, False, help, choices)


MODEL_FIELDS: dict[str, FieldSpec] = {
    "name": _text("display name"),
    "source": _text("where the facts came from (config.json copy, model card)", True),
    "notes": _text("anything a reader should know"),
    "hf_id": _text("the Hugging Face repository id, e.g. meta-llama/Llama-3.1-8B-Instruct"),
    "params": _num("total parameters from the model card (derived from the shape when absent)"),
    "active_params": _num("parameters active per token (MoE)"),
    "num_hidden_layers": _int("transformer layers", True, most=10_000,
                      most_why="the deepest models have about 200 layers"),
    "hidden_size": _int("model width", True, most=1_000_000,
                      most_why="the widest models are about 20,000 wide"),
    "num_attention_heads": _int("query heads", True, most=100_000,
                      most_why="the largest models have about 128 query heads"),
    "num_key_value_heads": _int("key/value heads (GQA); equals the query heads when absent"),
    "head_dim": _int("per-head width when the config states it"),
    "intermediate_size": _int("FFN width (per expert for Mixtral and gpt-oss)", True),
    "intermediate_size_mlp": _int("dense-layer FFN width (Llama 4)"),
    "vocab_size": _int("vocabulary / embedding rows", True, most=10_000_000,
                      most_why="the largest vocabularies have about 260,000 entries"),
    "tie_word_embeddings": FieldSpec("bool", help="true when input and output embeddings share"),
    "max_position_embeddings": _int("longest context the config allows"),
    "num_local_experts": _int("routed experts (Mixtral, gpt-oss, Llama 4)"),
    "num_experts": _int("routed experts (Qwen MoE)"),
    "n_routed_experts": _int("routed experts (DeepSeek, Kimi, GLM)"),
    "num_experts_per_tok": _int("experts each token routes to (top-k)"),
    "n_shared_experts": _int("shared experts per MoE layer", allow_zero=True),
    "moe_intermediate_size": _int("expert FFN width"),
    "shared_expert_intermediate_size": _int("shared-expert FFN width (Qwen)"),
    "first_k_dense_replace": _int("leading dense layers before the MoE layers", allow_zero=True),
    "interleave_moe_layer_step": _int("every n-th layer is MoE (Llama 4)"),
    "kv_lora_rank": _int("MLA latent width"),
    "q_lora_rank": _int("MLA query low-rank width"),
    "qk_rope_head_dim": _int("MLA rotary part of each key"),
    "qk_nope_head_dim": _int("MLA non-rotary part of each query/key head"),
    "v_head_dim": _int("MLA value head width"),
    "sliding_window": _int("tokens a sliding-window layer keeps"),
    "attention_chunk_size": _int("tokens a chunked-attention layer keeps (Llama 4)"),
    "layer_types": FieldSpec("layers", help="one entry per layer: " + ", ".join(LAYER_TYPES)),
    "linear_num_value_heads": _int("linear-attention value heads (Qwen3-Next)"),
    "linear_num_key_heads": _int("linear-attention key heads"),
    "linear_key_head_dim": _int("linear-attention key head width"),
    "linear_value_head_dim": _int("linear-attention value head width"),
    "linear_conv_kernel_dim": _int("short-convolution kernel width"),
    "vision_params": _num("parameters of a vision tower the text config does not count "
                          "(vision-language models)"),
    "checkpoint_bytes": _num("exact weight bytes of the checkpoint as stored "
                             "(model.safetensors.index.json metadata.total_size); overrides "
                             "the estimate for the format it was stored in"),
    "checkpoint_format": _text("the weight format checkpoint_bytes is stored in, e.g. bf16, "
                               "fp8, mxfp4"),
    "draft_layers": _int("extra attention layers a speculative-decoding draft head (EAGLE, MTP) "
                         "adds to the KV cache", allow_zero=True),
}

# Hugging Face config.json fields that describe the layer pattern instead of listing layer_types.
# A models YAML may carry them (a pasted config); they are turned into layer kinds when loading and
# are not catalog columns themselves. `planner import` writes layer_types instead.
LAYER_PATTERN_FIELDS: dict[str, FieldSpec] = {
    "full_attention_interval": FieldSpec("pattern", help="every n-th layer is full attention, "
                                         "the others linear attention (Qwen3-Next)"),
    "sliding_window_pattern": FieldSpec("pattern", help="every n-th layer is full attention, the "
                                        "others sliding-window (Gemma 3)"),
    "use_sliding_window": FieldSpec("pattern", help="false: no layer slides, whatever "
                                    "sliding_window says (Qwen2)"),
    "max_window_layers": FieldSpec("pattern", help="with use_sliding_window: true, layers from "
                                   "this index on slide (Qwen2)"),
    "no_rope_layers": FieldSpec("pattern", help="one 0/1 per layer: 1 = RoPE layer (chunked "
                                "attention with attention_chunk_size), 0 = NoPE full attention "
                                "(Llama 4)"),
    "no_rope_layer_interval": FieldSpec("pattern", help="every n-th layer is NoPE full attention "
                                        "when no_rope_layers is empty (Llama 4)"),
}

# Fields real config.json files carry that do not change memory or speed: a models YAML may keep
# them (they are skipped), and `planner import` lists them as read and not needed. Anything else
# unknown is refused in a YAML (with "did you mean") and reported by `planner import`.
HF_IGNORED_FIELDS = frozenset({
    "_name_or_path", "architectures", "auto_map", "model_type", "transformers_version",
    "torch_dtype", "dtype", "use_cache", "bos_token_id", "eos_token_id", "pad_token_id",
    "sep_token_id", "decoder_start_token_id", "initializer_range", "rms_norm_eps",
    "layer_norm_eps", "layer_norm_epsilon", "norm_eps", "hidden_act", "hidden_activation",
    "attention_dropout", "hidden_dropout", "embd_pdrop", "resid_pdrop", "attn_pdrop",
    "rope_theta", "rope_scaling", "rope_parameters", "rope_local_base_freq",
    "partial_rotary_factor", "rope_interleave", "pretraining_tp", "attention_bias", "mlp_bias",
    "qkv_bias", "use_qk_norm", "qk_layernorm", "output_router_logits", "router_aux_loss_coef",
    "router_jitter_noise", "router_z_loss_coef", "aux_loss_alpha", "seq_aux", "norm_topk_prob",
    "routed_scaling_factor", "scoring_func", "topk_method", "n_group", "topk_group",
    "query_pre_attn_scalar", "attn_logit_softcapping", "final_logit_softcapping",
    "cache_implementation", "attn_temperature_tuning", "attn_scale", "floor_scale",
    "for_llm_compressor", "swiglu_limit", "initial_context_length", "tokenizer_class",
    "bos_token", "eos_token", "use_bfloat16", "return_dict", "output_attentions",
    "output_hidden_states", "torchscript", "tie_encoder_decoder", "chunk_size_feed_forward",
    "is_decoder", "add_cross_attention", "problem_type", "id2label", "label2id",
    "num_nextn_predict_layers", "mtp_num_hidden_layers", "mtp_use_dedicated_embeddings",
    "ep_size", "moe_layers",
})

# Hugging Face fields that change which layers are MoE; a models YAML may carry them only at
# the value that changes nothing (the catalog expresses other layouts with first_k_dense_replace
# and interleave_moe_layer_step).
HF_DEFAULT_ONLY_FIELDS: dict[str, object] = {
    "decoder_sparse_step": 1, "moe_layer_freq": 1, "mlp_only_layers": [],
}

GPU_FIELDS: dict[str, FieldSpec] = {
    "name": _text("display name"),
    "vendor": _text("NVIDIA, AMD, Intel"),
    "source": _text("where the specs came from", True),
    "notes": _text("anything a reader should know"),
    "memory_gb": _num("marketed memory, decimal GB (10^9 bytes)", True),
    "memory_mib": _num("device-reported memory in MiB (nvidia-smi / rocm-smi)"),
    "bandwidth_tb_s": _num("memory bandwidth, decimal TB/s", True),
    "bf16_tflops": _num("dense BF16 tensor TFLOP/s (halve a with-sparsity figure)", True),
    "fp8_tflops": _num("dense FP8 tensor TFLOP/s"),
    "fp4_tflops": _num("dense FP4 tensor TFLOP/s"),
    "gpus_per_node": _int("GPUs per node / scale-up domain", True),
    "tdp_w": _num("board power, W"),
    "price_per_hour_usd": _num("approximate on-demand price per GPU-hour, USD", True),
    "price_usd": _num("approximate purchase price per GPU, USD"),
    "price_date": _text("when the prices were true, YYYY-MM", True),
    "price_source": _text("where the prices came from"),
    "memory_engine_gib": _num("device total the serving engine sizes against: what CUDA/ROCm "
                              "reports (torch.cuda.mem_get_info total), GiB (2^30 bytes)"),
    "memory_engine_source": _text("where memory_engine_gib was read (an engine log, an issue)"),
    "scale_up_gb_s": _num("per-GPU scale-up bandwidth (NVLink, Infinity Fabric, xGMI) in one "
                          "direction, decimal GB/s; leave out for PCIe-only cards"),
    "allreduce_latency_us": _num("small-message all-reduce latency inside the scale-up domain, "
                                 "microseconds"),
    "interconnect_source": _text("where scale_up_gb_s and allreduce_latency_us came from"),
    "nvls_buffer_mib_per_rank": _num("NCCL's NVLink SHARP (NVLS) buffer per head of a "
                                     "tensor-parallel group on NVSwitch GPUs (Hopper and "
                                     "later): channels × 2 × chunk × steps, MiB; a GPU holds "
                                     "one per rank of groups larger than 2"),
    "compute_units": _num("streaming multiprocessors (NVIDIA) or compute units (AMD) the GPU "
                          "has"),
    "mla_decode_max_splits": _num("most workgroups the MLA decode kernel splits one sequence's "
                                  "KV cache over (AMD CDNA, aiter's mla_decode_fwd: 16); given "
                                  "where the kernel's occupancy limits decode attention"),
    "mla_decode_split_overhead_tokens": _num("fixed cost of one KV split of the MLA decode "
                                             "kernel, in KV tokens' worth of time (aiter: "
                                             "84.1)"),
    "attention_source": _text("where compute_units and the MLA decode kernel's figures came "
                              "from"),
    "engine_small_defaults": _num("1 where vLLM keeps its smaller scheduler defaults (256 "
                                  "sequences, 2,048 batched tokens) although the GPU has "
                                  "≥ 70 GiB: the A100 (vLLM PR #17885)"),
    "bandwidth_efficiency": _num("measured fraction of peak memory bandwidth that decode "
                                 "reaches on this GPU family (overrides the global default)"),
    "compute_efficiency": _num("measured fraction of dense peak FLOP/s that prefill reaches on "
                               "this GPU family (overrides the global default)"),
    "compute_efficiency_fp4": _num("measured fraction of the dense FP4 peak that FP4 GEMMs "
                                   "reach on this GPU family (FP4 kernels fall further from "
                                   "their peak than BF16 and FP8 ones)"),
    "efficiency_source": _text("the measurements behind bandwidth_efficiency / "
                               "compute_efficiency"),
}

SERVER_VENDORS = ("nvidia", "amd", "intel")
FABRICS = ("ethernet", "infiniband")

SERVER_FIELDS: dict[str, FieldSpec] = {
    "name": _text("display name"),
    "gpu": _text("the GPU id (catalogs/gpus.yaml) the server carries", True),
    "vendor": _text("who makes the GPUs: nvidia, amd or intel (the GPU catalog's vendor)",
                    choices=SERVER_VENDORS),
    "gpus_per_server": _int("GPUs in one server (or rack-scale unit)", True),
    "scale_up_gpus": _int("GPUs one tensor-parallel group may span (the NVLink domain); "
                          "default gpus_per_server"),
    "price_usd": _num("purchase price of the whole server, USD", True),
    "power_kw": _num("maximum power of the whole server, kW", True),
    "rack_units": _num("height, rack units (U)", True),
    "whole_rack": FieldSpec("bool", help="true when the unit is a rack of its own (GB200 "
                                         "NVL72): it brings its own power and cooling"),
    "price_date": _text("when the price was true, YYYY-MM", True),
    "support_usd_per_gpu_year": _num("software subscription per GPU-year, USD: NVIDIA AI "
                                     "Enterprise list ($4,500) where not bundled; 0 for AMD "
                                     "(ROCm is free) and where the card bundles it (H100 "
                                     "PCIe/NVL, H200 NVL); absent: the "
                                     "support_usd_per_gpu_year assumption", allow_zero=True),
    "fabric": _text("the scale-out network the server is costed with: ethernet (a front-end "
                    "network; single-node inference, every replica inside one server) or "
                    "infiniband (an 8-rail backend; replicas spanning servers)",
                    choices=FABRICS),
    "network_usd_per_server": _num("that network's cost per server, USD: switch share and "
                                   "cables (the NICs are in price_usd)", allow_zero=True),
    "rdma_gb_s": _num("scale-out RDMA bandwidth per GPU, GB/s (one 400 Gb/s ConnectX-7 per "
                      "GPU: 50): what moves a prompt's KV cache from a prefill to a decode "
                      "replica in disaggregated serving; absent: the rdma_gb_s_fallback "
                      "assumption"),
    "lead_time_weeks": _num("weeks from order to delivery; absent: the lead_time_weeks "
                            "assumption (which may be 0: in stock)"),
    "source": _text("where price, power, size, support and network come from", True),
    "notes": _text("anything a reader should know"),
}

WORKLOAD_FIELDS: dict[str, FieldSpec] = {
    "name": _text("display name"),
    "model": _text("the model id (catalogs/models.yaml) the workload runs", True),
    "rate_rps": _num("design-peak requests per second"),
    "tokens_per_day": _num("input + output tokens per day (instead of rate_rps)"),
    "peak_to_average": _num("peak rate ÷ average rate (default 1)"),
    "prompt_tokens": _int("prompt (input) tokens per request", True),
    "output_tokens": _int("output tokens per request", True),
    "ttft_s": _num("time-to-first-token target, seconds", True),
    "itl_s": _num("inter-token latency target, seconds", True),
    "latency_percentile": _num("the percentile of tokens and requests the ttft_s and itl_s "
                               "targets hold for (default 95; 50 is the median)"),
    "weights": FieldSpec("ids", help="allowed weight formats (default bf16, fp8)"),
    "kv": FieldSpec("ids", help="allowed KV-cache formats (default bf16, fp8)"),
    "gpus": FieldSpec("ids", help="allowed GPU ids (default: every GPU with a server)"),
    "spare_replicas": _int("replicas kept spare for failures and maintenance",
                           allow_zero=True),
    "growth": FieldSpec("number", allow_zero=True, minimum=-1,
                        help="growth of the peak rate per month, a fraction (0.08: 8 % a month; "
                             "-0.05: 5 % fewer each month; at least -1); the purchase schedule "
                             "compounds it, (1 + growth)^3 a quarter"),
    "schedule": FieldSpec("numbers", help="peak rates of the quarters after the first, "
                                          "requests/s, e.g. [30, 45, 60] (the first quarter's is "
                                          "the workload's own peak, which the plan sizes; the "
                                          "last holds to the horizon); instead of growth"),
    "source": _text("where the traffic shape and targets come from", True),
    "notes": _text("anything a reader should know"),
}

CLOUD_FIELDS: dict[str, FieldSpec] = {
    "provider": _text("who rents it, e.g. aws, azure, gcp, coreweave, lambda", True),
    "instance": _text("the instance type or node as the provider's price list names it", True),
    "gpu": _text("the GPU id (catalogs/gpus.yaml) the instance carries", True),
    "gpus_per_instance": _int("GPUs in one instance", True),
    "on_demand_usd_per_hour": _num("on-demand price of one instance per hour, USD", True),
    "reserved_1y_usd_per_hour": _num("price of one instance per hour with a 1-year commitment, "
                                     "USD (no more than on-demand)", True),
    "reserved_3y_usd_per_hour": _num("price of one instance per hour with a 3-year commitment, "
                                     "USD (no more than the 1-year price)", True),
    "price_date": _text("when the on-demand price was true, YYYY-MM", True),
    "source": _text("where the prices come from and what it says", True),
    "notes": _text("anything a reader should know: which prices are derived, and how"),
}

# Numeric fields the arithmetic reads; absent ones read as 0 like a blank spreadsheet cell.
MODEL_NUMERIC = [k for k, s in MODEL_FIELDS.items() if s.kind in ("int", "number", "bool")]
MODEL_LAYER_COUNTS = [f"{t.split('_')[0]}_attention_layers" for t in LAYER_TYPES]
MODEL_TEXT_INPUTS = ["checkpoint_format"]  # text fields formulas read
GPU_NUMERIC = [k for k, s in GPU_FIELDS.items() if s.kind in ("int", "number")]


def suggest_field(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else f"known fields: {', '.join(choices)}"


def _shown(value: float) -> str:
    """A number for a message: 12,825,600,000; 1e+30; 1e+400 (an int too large for a float)."""
    if isinstance(value, int) and abs(value) >= 10**15:
        digits = str(abs(value))
        fraction = digits[1:3].rstrip("0")
        return f"{'-' if value < 0 else ''}{digits[0]}{'.' + fraction if fraction else ''}" \
               f"e+{len(digits) - 1}"
    return f"{value:,}" if abs(value) < 1e15 else f"{value:.3g}"


def check_value(spec: FieldSpec, node: Node, loc: Location) -> object:
    value = node.value
    if spec.kind == "text":
        if hasattr(value, "isoformat") and not isinstance(value, str):
            value = value.isoformat()  # YAML reads 2026-03-01 as a date
        if not isinstance(value, str) or not value.strip():
            raise CatalogError(loc, f"must be text, got {value!r}", "write it as a quoted string")
        if spec.choices and value not in spec.choices:
            close = difflib.get_close_matches(value.lower(), spec.choices, n=1)
            raise CatalogError(loc, f"must be one of {', '.join(spec.choices)}, got {value!r}",
                               f"did you mean '{close[0]}'?" if close else spec.help)
        return value
    if spec.kind == "bool":
        if not isinstance(value, bool):
            raise CatalogError(loc, f"must be true or false, got {value!r}")
        return value
    if spec.kind in ("layers", "pattern"):
        return value  # checked with the rest of the entry
    if spec.kind == "numbers":
        return _numbers(spec, value, loc)
    if spec.kind == "ids":
        items = value if isinstance(value, list) else None
        if not items or not all(isinstance(i.value, str) for i in items):
            raise CatalogError(loc, f"must be a non-empty list of ids, got {value!r}",
                               f"e.g. [bf16, fp8]; {spec.help}")
        return [i.value for i in items]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CatalogError(loc, f"must be a number, got {value!r}",
                           f"expected {spec.help}, e.g. 4096 (no quotes or units)")
    if isinstance(value, float) and math.isnan(value):
        raise CatalogError(loc, "is NaN (not a number)", f"expected {spec.help}")
    if isinstance(value, float) and math.isinf(value):
        raise CatalogError(loc, "is infinite", f"expected a finite {spec.help}")
    if spec.minimum is not None and value < spec.minimum:
        raise CatalogError(loc, f"must be at least {spec.minimum:g}, got {value}",
                           f"expected {spec.help}")
    if value < 0 and spec.minimum is None:
        raise CatalogError(loc, f"must not be negative, got {value}", f"expected {spec.help}")
    if value == 0 and not spec.allow_zero:
        raise CatalogError(loc, "must be greater than 0, got 0",
                           f"expected {spec.help}; leave the field out if it does not apply")
    if spec.most is not None and value > spec.most:
        raise CatalogError(loc, f"{_shown(value)} is beyond any real model: at most "
                           f"{spec.most:,.0f} ({spec.most_why})",
                           f"expected {spec.help}; check the value")
    if spec.kind == "int":
        if isinstance(value, float) and not value.is_integer():
            raise CatalogError(loc, f"must be a whole number, got {value}", f"expected {spec.help}")
        if value > LARGEST_COUNT:
            raise CatalogError(loc, f"{_shown(value)} is too large for a count (at most 2^53)",
                               f"expected {spec.help}; check the value")
        return int(value)
    return value


def _numbers(spec: FieldSpec, value: object, loc: Location) -> list[float | int]:
    """A non-empty list of positive numbers; a bad item is located at its own line."""
    items = value if isinstance(value, list) else None
    if not items:
        raise CatalogError(loc, f"must be a non-empty list of numbers, got {value!r}",
                           f"e.g. [30, 45, 60]; {spec.help}")
    out: list[float | int] = []
    for i, item in enumerate(items, start=1):
        number = item.value if isinstance(item, Node) else item
        where = (Location(loc.path, item.line, entry=loc.entry, field=loc.field)
                 if isinstance(item, Node) and item.line else loc)
        if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(
                number):
            raise CatalogError(where, f"entry {i} must be a number, got {number!r}",
                               f"expected {spec.help}")
        if number <= 0:
            raise CatalogError(where, f"entry {i} must be greater than 0, got {number}",
                               "a peak rate in requests/s; a quarter with no traffic still "
                               "needs a rate above 0")
        out.append(number)
    return out
