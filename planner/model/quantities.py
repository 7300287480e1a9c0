"""Every derived quantity, defined once (SPEC §3).

Two scopes:

* ``MODEL_QUANTITIES`` depend only on a model's catalog fields (head_dim, KV elements per token,
  parameter counts). They become derived columns of the workbook's Models sheet.
* ``ROW_QUANTITIES`` depend on one configuration (model, GPU, formats, TP, context, batch,
  prompt) and the assumptions. They become the columns of the Grid sheet, the ``planner calc``
  output and the HTML summary's numbers.

Leaves: ``var`` scenario values, ``model``/``gpu`` catalog fields or model quantities,
``weights``/``kv`` format fields, ``assume`` assumptions, ``q`` another row quantity.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.model.expr import AND, IF, INT, MAX, MIN, NOT, OR, Expr, Ref
from planner.model.units import GB, MILLION, SECONDS_PER_HOUR, TB_PER_S, TFLOPS, GiB, MiB


@dataclass(frozen=True)
class Quantity:
    name: str  # JSON key and column id
    label: str  # header text, without unit
    unit: str  # base unit shown in headers: "B", "s", "FLOP", "tokens", ...
    expr: Expr
    description: str  # the definition in words
    kind: str = "number"  # number | int | bool | text
    spec: bool = False  # one of SPEC §3's JSON keys
    display: str = "plain"  # number-format family: bytes | seconds | rate | usd | plain | ratio


def m(name: str) -> Ref:
    return Ref("model", name)


def g(name: str) -> Ref:
    return Ref("gpu", name)


def v(name: str) -> Ref:
    return Ref("var", name)


def a(name: str) -> Ref:
    return Ref("assume", name)


def q(name: str) -> Ref:
    return Ref("q", name)


# --------------------------------------------------------------------------------------------
# Model scope: derived from config.json fields (absent fields read as 0, as a blank cell does)
# --------------------------------------------------------------------------------------------

_is_mla = m("kv_lora_rank") > 0
_hidden = m("hidden_size")
_layers = m("num_hidden_layers")
_heads = m("num_attention_heads")

MODEL_QUANTITIES: list[Quantity] = [
    Quantity("head_dim_effective", "Head dimension", "elements",
             IF(m("head_dim") > 0, m("head_dim"), _hidden / _heads),
             "the head_dim field when the config has one (Qwen3, Mistral Small 3, Gemma), "
             "else hidden_size / num_attention_heads", kind="int"),
    Quantity("kv_heads_effective", "KV heads", "heads",
             IF(m("num_key_value_heads") > 0, m("num_key_value_heads"), _heads),
             "num_key_value_heads (GQA/MQA); equal to the query heads when absent (MHA)",
             kind="int"),
    Quantity("is_mla", "Multi-head latent attention", "", _is_mla,
             "true when the config has kv_lora_rank (DeepSeek-V2/V3, Kimi K2)", kind="bool"),
    Quantity("attention_head_dim", "Attention head dimension", "elements",
             IF(_is_mla, m("qk_nope_head_dim") + m("qk_rope_head_dim"), m("head_dim_effective")),
             "the query/key width attention multiplies over: head_dim, or for MLA "
             "qk_nope_head_dim + qk_rope_head_dim", kind="int"),
    Quantity("kv_elements_per_token_per_layer", "KV elements per token per layer", "elements",
             IF(_is_mla, m("kv_lora_rank") + m("qk_rope_head_dim"),
                2 * m("kv_heads_effective") * m("head_dim_effective")),
             "K and V: 2 × KV heads × head_dim (never query heads); MLA: one latent of "
             "kv_lora_rank + qk_rope_head_dim, no ×2", kind="int"),
    Quantity("attention_layers", "Attention layers (full + window)", "layers",
             m("full_attention_layers") + m("sliding_attention_layers")
             + m("chunked_attention_layers"),
             "layers that keep a KV cache; linear-attention layers keep a fixed state instead",
             kind="int"),
    Quantity("kv_elements_per_token", "KV elements per token (all layers)", "elements",
             m("attention_layers") * m("kv_elements_per_token_per_layer"),
             "every attention layer's KV elements for one token, before window capping",
             kind="int"),
    Quantity("kv_bytes_per_token_bf16", "KV cache per token at BF16", "B",
             m("kv_elements_per_token") * Ref("assume", "bytes_per_kv_element_bf16"),
             "KV elements per token × bytes_per_kv_element_bf16: the figure model write-ups "
             "quote", kind="int"),
    Quantity("linear_state_elements_per_layer", "Linear-attention state per layer", "elements",
             m("linear_num_value_heads") * m("linear_key_head_dim") * m("linear_value_head_dim")
             + (2 * m("linear_num_key_heads") * m("linear_key_head_dim")
                + m("linear_num_value_heads") * m("linear_value_head_dim"))
             * MAX(0, m("linear_conv_kernel_dim") - 1),
             "Gated DeltaNet: recurrent state v_heads × k_dim × v_dim plus the short-convolution "
             "state (q, k, v channels × (kernel − 1)); fixed per sequence", kind="int"),
    Quantity("experts", "Routed experts", "experts",
             m("num_local_experts") + m("num_experts") + m("n_routed_experts"),
             "num_local_experts / num_experts / n_routed_experts (whichever the config uses)",
             kind="int"),
    Quantity("moe_layers", "MoE layers", "layers",
             IF(m("experts") > 0,
                INT((_layers - m("first_k_dense_replace"))
                    / MAX(1, m("interleave_moe_layer_step"))), 0),
             "layers after first_k_dense_replace, every interleave_moe_layer_step-th", kind="int"),
    Quantity("expert_ffn", "Expert FFN width", "elements",
             IF(m("moe_intermediate_size") > 0, m("moe_intermediate_size"),
                m("intermediate_size")),
             "moe_intermediate_size, else intermediate_size (Mixtral, gpt-oss)", kind="int"),
    Quantity("dense_ffn", "Dense FFN width", "elements",
             IF(m("intermediate_size_mlp") > 0, m("intermediate_size_mlp"),
                m("intermediate_size")),
             "intermediate_size_mlp (Llama 4 dense layers), else intermediate_size", kind="int"),
    Quantity("shared_expert_ffn", "Shared-expert FFN width", "elements",
             IF(m("shared_expert_intermediate_size") > 0, m("shared_expert_intermediate_size"),
                m("n_shared_experts") * m("expert_ffn")),
             "shared_expert_intermediate_size, else n_shared_experts × expert FFN", kind="int"),
    Quantity("attention_params_per_layer", "Attention parameters per layer", "params",
             IF(_is_mla,
                _hidden * m("q_lora_rank")
                + m("q_lora_rank") * _heads * (m("qk_nope_head_dim") + m("qk_rope_head_dim"))
                + _hidden * (m("kv_lora_rank") + m("qk_rope_head_dim"))
                + m("kv_lora_rank") * _heads * (m("qk_nope_head_dim") + m("v_head_dim"))
                + _heads * m("v_head_dim") * _hidden,
                2 * _hidden * _heads * m("head_dim_effective")
                + 2 * _hidden * m("kv_heads_effective") * m("head_dim_effective")),
             "Q and O: 2 × hidden × heads × head_dim; K and V: 2 × hidden × KV heads × head_dim; "
             "MLA: the low-rank q/kv projections", kind="int"),
    Quantity("routed_expert_params", "Routed-expert parameters", "params",
             m("moe_layers") * m("experts") * 3 * _hidden * m("expert_ffn"),
             "MoE layers × experts × 3 matrices (gate, up, down) × hidden × expert FFN",
             kind="int"),
    Quantity("params_derived", "Parameters derived from shape", "params",
             _layers * m("attention_params_per_layer")
             + (_layers - m("moe_layers")) * 3 * _hidden * m("dense_ffn")
             + m("moe_layers") * (3 * _hidden * m("shared_expert_ffn") + _hidden * m("experts"))
             + m("routed_expert_params")
             + m("vocab_size") * _hidden * IF(m("tie_word_embeddings"), 1, 2),
             "attention + SwiGLU FFN (3 matrices) per layer + routers + embeddings (twice when "
             "untied); norms and biases ignored", kind="int"),
    Quantity("params_total", "Total parameters", "params",
             IF(m("params") > 0, m("params"), m("params_derived")),
             "params from the catalog (model card), else the count derived from the shape",
             kind="int"),
    Quantity("params_active", "Active parameters per token", "params",
             IF(m("active_params") > 0, m("active_params"),
                IF(m("experts") > 0,
                   m("params_total") - m("routed_expert_params")
                   + m("routed_expert_params") * m("num_experts_per_tok") / m("experts"),
                   m("params_total"))),
             "active_params from the card (MoE), else total minus the experts a token does not "
             "route to", kind="int"),
    Quantity("embedding_params", "Embedding and LM-head parameters", "params",
             m("vocab_size") * _hidden * IF(m("tie_word_embeddings"), 1, 2),
             "vocab_size × hidden_size, twice when input and output embeddings are untied",
             kind="int"),
    Quantity("params_basis", "Parameter count basis", "",
             IF(m("params") > 0, "catalog params", "derived from shape"),
             "where the parameter count comes from", kind="text"),
]

# --------------------------------------------------------------------------------------------
# Row scope: one configuration
# --------------------------------------------------------------------------------------------

_tp = v("tp")
_t = v("context")
_b = v("batch")
_p = v("prompt")
_o = v("output")
_s = Ref("kv", "bytes_per_element")
_w = Ref("weights", "bytes_per_param")
_w16 = a("bytes_per_param_bf16")
_compute = Ref("weights", "compute")
_act = a("activation_bytes_per_element")


def e(name: str) -> Ref:
    """A field of the selected engine's row in the engine table (planner.model.engines)."""
    return Ref("engine", name)


def _experts_read(batch: Expr) -> Expr:
    """Distinct experts a batch routes to per MoE layer, uniform independent routing."""
    return IF(m("experts") > 0,
              m("experts") * (1 - (1 - m("num_experts_per_tok") / m("experts")) ** batch), 0)


def _weights_read(experts_read: Expr) -> Expr:
    """Weights one step reads: all but the routed experts the batch does not reach."""
    return q("weight_bytes") - IF(m("experts") > 0, q("expert_weight_bytes")
                                  * (1 - experts_read / m("experts")), 0)


def _ceil(x: Expr) -> Expr:
    return -INT(-x)


def _layer_tokens(tokens: Expr, engine_pages: bool) -> Expr:
    """Layer-tokens one sequence of `tokens` keeps (engine_pages: as the engine allocates them,
    with window tails and padded layer groups) or reads (windows capped at the window)."""
    if not engine_pages:
        return ((m("full_attention_layers") + m("draft_layers")) * tokens
                + m("sliding_attention_layers") * MIN(tokens, m("sliding_window"))
                + m("chunked_attention_layers") * MIN(tokens, m("attention_chunk_size")))
    tail = e("window_tail") * (q("max_num_batched_tokens_effective") - 1)
    return (q("full_layers_paged") * tokens
            + q("sliding_layers_paged") * MIN(tokens, m("sliding_window") + tail)
            + q("chunked_layers_paged") * MIN(tokens, m("attention_chunk_size") + tail))


def _prefill_pairs(p: Expr) -> Expr:
    """Causal query-key pairs per head summed over layers, for a prompt of p tokens."""
    w = MIN(p, m("sliding_window"))
    c = MIN(p, m("attention_chunk_size"))
    return (m("full_attention_layers") * p * p / 2
            + m("sliding_attention_layers") * w * (p - w / 2)
            + m("chunked_attention_layers") * p * c / 2)


def allreduce_seconds(tokens: Expr | int | None, latency: bool = True) -> Expr:
    """Two all-reduces per layer (attention and FFN outputs) of tokens × hidden activations
    across the TP group: latency + ring traffic 2(TP − 1)/TP × bytes over scale-up bandwidth.
    Tokens that ride in a step that already pays the latency (prefill chunks interleaved with
    decode) add only the traffic: ``latency=False``; ``tokens=None`` is the latency alone."""
    parts: list[Expr] = [q("allreduce_latency_seconds")] if latency else []
    if tokens is not None:
        parts.append(2 * (_tp - 1) / _tp * tokens * _hidden * _act
                     / q("scale_up_bytes_per_second"))
    per_layer = parts[0] if len(parts) == 1 else parts[0] + parts[1]
    return IF(_tp > 1, 2 * _layers * per_layer, 0)


def _engine_default(assumption: str, field: str) -> Expr:
    """An assumption that defaults ('auto') to the selected engine's figure."""
    return IF(a(assumption).eq("auto"), e(field), a(assumption))


def _padded(width: Expr) -> Expr:
    pad = Ref("weights", "expert_pad")
    return _ceil(width / pad) * pad


def _paged(kind: str) -> Expr:
    count = m(f"{kind}_attention_layers")
    return IF(AND(e("pads_layer_groups"), q("attention_kinds") > 1, count > 0),
              _ceil(count / q("layer_group_size")) * q("layer_group_size"), count)


_BIG = 10**9
_full, _slid, _chunk = (m("full_attention_layers"), m("sliding_attention_layers"),
                        m("chunked_attention_layers"))

ROW_QUANTITIES: list[Quantity] = [
    # -- weights, as the engine loads them ---------------------------------------------------
    Quantity("expert_weight_bytes", "Routed-expert weights", "B",
             IF(e("weights_as_loaded"),
                m("moe_layers") * m("experts") * 3 * _padded(_hidden)
                * _padded(m("expert_ffn") / _tp) * _tp,
                m("routed_expert_params")) * _w,
             "routed-expert parameters × bytes per parameter; as engines load them, hidden and "
             "per-rank expert widths rounded up to the format's kernel padding (MXFP4: 256)",
             display="bytes"),
    Quantity("weight_bytes", "Weights", "B",
             IF(AND(m("checkpoint_bytes") > 0, m("checkpoint_format").eq(v("weights"))),
                m("checkpoint_bytes"),
                IF(e("weights_as_loaded"),
                   m("embedding_params") * IF(Ref("weights", "embeddings_16bit"), _w16, _w)
                   + q("expert_weight_bytes")
                   + MAX(0, m("params_total") - m("embedding_params")
                         - m("routed_expert_params"))
                   * IF(Ref("weights", "experts_only"), _w16, _w),
                   m("params_total") * _w))
             + e("weights_as_loaded") * m("vision_params") * _w16,
             "the checkpoint's exact bytes when it is stored in this format; else, as engines "
             "load it, embeddings and LM head at 16 bits where the format keeps them so, experts "
             "in the format, the rest in the format (BF16 for expert-only formats such as "
             "MXFP4), plus a vision tower at 16 bits; engine=none: total parameters × bytes",
             spec=True, display="bytes"),
    Quantity("weight_bytes_per_gpu", "Weights per GPU", "B", q("weight_bytes") / _tp,
             "weights split evenly over the TP ranks", spec=True, display="bytes"),
    # -- KV cache per token ----------------------------------------------------------------
    Quantity("kv_bytes_per_token", "KV cache per token", "B",
             (m("kv_elements_per_token")
              + m("draft_layers") * m("kv_elements_per_token_per_layer")) * _s,
             "KV elements per token (all attention layers, plus a draft head's) × bytes per KV "
             "element", spec=True, display="bytes"),
    Quantity("kv_share_per_gpu", "Share of KV one GPU stores", "fraction",
             IF(m("is_mla"), 1, MAX(1, m("kv_heads_effective") / _tp) / m("kv_heads_effective")),
             "KV heads are split over TP ranks with at least one head per rank (replicated when "
             "there are fewer KV heads than ranks); an MLA latent is replicated on every rank",
             display="ratio"),
    Quantity("kv_bytes_per_token_per_gpu", "KV per token per GPU", "B",
             q("kv_bytes_per_token") * q("kv_share_per_gpu"),
             "what one GPU stores per token", spec=True, display="bytes"),
    # -- the memory the engine sizes against ------------------------------------------------
    Quantity("gpu_memory_bytes", "GPU memory", "B",
             IF(AND(a("memory_basis").eq("engine"), g("memory_engine_gib") > 0),
                g("memory_engine_gib") * GiB,
                IF(AND(NOT(a("memory_basis").eq("marketed")), g("memory_mib") > 0),
                   g("memory_mib") * MiB, g("memory_gb") * GB)),
             "memory_basis 'engine': the total CUDA/ROCm reports (memory_engine_gib × 2^30); "
             "'reported' or no engine figure: nvidia-smi MiB × 2^20; else marketed GB × 10^9",
             spec=True, display="bytes"),
    Quantity("max_num_seqs_effective", "Engine's max sequences", "sequences",
             IF(a("max_num_seqs").eq("auto"),
                IF(AND(q("gpu_memory_bytes") >= 70 * GiB, NOT(g("engine_small_defaults") > 0)),
                   e("max_num_seqs_large"),
                   e("max_num_seqs_small")), a("max_num_seqs")),
             "max_num_seqs, or with 'auto' the engine's default for this GPU's memory (the "
             "smaller one on GPUs marked engine_small_defaults: the A100)",
             kind="int"),
    Quantity("max_num_batched_tokens_effective", "Engine's max batched tokens", "tokens",
             IF(a("max_num_batched_tokens").eq("auto"),
                IF(AND(q("gpu_memory_bytes") >= 70 * GiB, NOT(g("engine_small_defaults") > 0)),
                   e("max_num_batched_tokens_large"),
                   e("max_num_batched_tokens_small")), a("max_num_batched_tokens")),
             "max_num_batched_tokens, or with 'auto' the engine's default for this GPU's "
             "memory (the smaller one on GPUs marked engine_small_defaults: the A100)",
             kind="int"),
    Quantity("sampler_bytes_per_gpu", "Profile run: sampler", "B",
             q("max_num_seqs_effective") * m("vocab_size") * a("sampler_bytes_per_logit"),
             "max sequences × vocabulary × sampler_bytes_per_logit (logits over the whole "
             "vocabulary on every rank)", display="bytes"),
    Quantity("forward_bytes_per_gpu", "Profile run: dense forward pass", "B",
             q("max_num_batched_tokens_effective") * (3 * m("dense_ffn") / _tp + 4 * _hidden)
             * _act,
             "max batched tokens × (3 × FFN width / TP + 4 × hidden) × activation bytes: the "
             "FFN's gate, up and activated product, and four hidden-width tensors alive beside "
             "them (residual, normed input, attention output, layer output); freed before "
             "sampling", display="bytes"),
    Quantity("moe_workspace_bytes_per_gpu", "Profile run: MoE workspace", "B",
             IF(m("experts") > 0,
                q("max_num_batched_tokens_effective") * m("num_experts_per_tok")
                * (3 * m("expert_ffn") / _tp + _hidden) * _act, 0),
             "max batched tokens × top-k × (3 × expert FFN / TP + hidden) × activation bytes: "
             "the fused-MoE intermediate caches, kept across the run", display="bytes"),
    Quantity("activation_bytes_per_gpu", "Activation peak per GPU", "B",
             MAX(q("sampler_bytes_per_gpu"), q("forward_bytes_per_gpu"))
             + q("moe_workspace_bytes_per_gpu")
             + m("vision_params") * a("vision_profile_bytes_per_param"),
             "the larger of sampler and dense forward, + MoE workspace, + a vision encoder's "
             "profile (tower parameters × vision_profile_bytes_per_param)", display="bytes"),
    Quantity("non_torch_bytes_per_gpu", "Non-torch memory per GPU", "B",
             _engine_default("non_torch_gib_per_gpu", "non_torch_gib") * GiB
             + IF(_tp > 1, a("comm_buffer_gib_per_gpu") * GiB
                  * IF(g("scale_up_gb_s") > 0, 1, 0.1), 0)
             + IF(_tp >= 8, g("nvls_buffer_gib") * GiB, 0),
             "non_torch_gib_per_gpu ('auto': the engine's figure) + at TP ≥ 2 the communication "
             "buffers "
             "(comm_buffer_gib_per_gpu; a tenth over PCIe) + at TP ≥ 8 the GPU's NVLink SHARP "
             "buffers (nvls_buffer_gib)", display="bytes"),
    Quantity("cuda_graph_bytes_in_budget", "CUDA graphs reserved before the KV pool", "B",
             a("cuda_graphs_in_budget") * a("cuda_graph_gib_per_gpu") * GiB,
             "cuda_graphs_in_budget × cuda_graph_gib_per_gpu × 2^30 (vLLM ≥ 0.21 reserves its "
             "estimate first)", display="bytes"),
    Quantity("runtime_bytes_per_gpu", "Runtime memory per GPU", "B",
             IF(a("overhead_gib_per_gpu").eq("auto"),
                e("charges_runtime") * (e("profiles_activation") * q("activation_bytes_per_gpu")
                                        + q("non_torch_bytes_per_gpu")
                                        + q("cuda_graph_bytes_in_budget")),
                a("overhead_gib_per_gpu") * GiB),
             "overhead_gib_per_gpu × 2^30 when pinned; with 'auto' the engine's charge: "
             "activation peak (engines that profile) + non-torch memory + CUDA graphs when "
             "the engine reserves them first", display="bytes"),
    Quantity("usable_bytes_per_gpu", "Memory for weights and KV per GPU", "B",
             a("gpu_memory_utilization")
             * (q("gpu_memory_bytes") - e("fraction_after_weights") * q("weight_bytes_per_gpu")
                - e("fraction_after_runtime") * q("runtime_bytes_per_gpu"))
             - (1 - e("fraction_after_runtime")) * q("runtime_bytes_per_gpu")
             + e("fraction_after_weights") * q("weight_bytes_per_gpu"),
             "the engine's policy: fraction × (memory − what it takes first) − what it takes "
             "after; vLLM and engine=none: memory × gpu_memory_utilization − runtime",
             spec=True, display="bytes"),
    Quantity("weights_fit", "Weights fit", "",
             q("weight_bytes_per_gpu") <= q("usable_bytes_per_gpu"),
             "weights per GPU ≤ memory for weights and KV per GPU", kind="bool"),
    Quantity("kv_pool_bytes_per_gpu", "KV pool per GPU", "B",
             MAX(0, q("usable_bytes_per_gpu") - q("weight_bytes_per_gpu")),
             "memory for weights and KV − weights, not below 0", display="bytes"),
    Quantity("kv_pool_bytes", "KV pool (replica)", "B", _tp * q("kv_pool_bytes_per_gpu"),
             "TP × per-GPU pool", spec=True, display="bytes"),
    Quantity("device_headroom_bytes_per_gpu", "Device headroom after CUDA graphs", "B",
             q("gpu_memory_bytes") - q("weight_bytes_per_gpu") - q("runtime_bytes_per_gpu")
             - q("kv_pool_bytes_per_gpu")
             - (1 - a("cuda_graphs_in_budget")) * a("cuda_graph_gib_per_gpu") * GiB,
             "memory − weights − runtime − KV pool − CUDA graphs captured outside the budget; "
             "below 0 the engine runs out of memory at start-up", display="bytes"),
    # -- KV per sequence, as the engine pages it ----------------------------------------------
    Quantity("attention_kinds", "Attention kinds in the model", "kinds",
             IF(_full > 0, 1, 0) + IF(_slid > 0, 1, 0) + IF(_chunk > 0, 1, 0),
             "how many of full, sliding-window and chunked attention the model mixes",
             kind="int"),
    Quantity("layer_group_size", "Layers per page group", "layers",
             MIN(IF(_full > 0, _full, _BIG), IF(_slid > 0, _slid, _BIG),
                 IF(_chunk > 0, _chunk, _BIG)),
             "hybrid models: the smallest count of one attention kind; the engine groups "
             "layers of a kind into groups of this size", kind="int"),
    Quantity("full_layers_paged", "Full-attention layers as paged", "layers",
             _paged("full") + m("draft_layers"),
             "full-attention layers padded to whole page groups, plus draft layers", kind="int"),
    Quantity("sliding_layers_paged", "Sliding-window layers as paged", "layers",
             _paged("sliding"), "sliding-window layers padded to whole page groups",
             kind="int"),
    Quantity("chunked_layers_paged", "Chunked-attention layers as paged", "layers",
             _paged("chunked"), "chunked-attention layers padded to whole page groups",
             kind="int"),
    Quantity("attended_layer_tokens", "Cached layer-tokens per sequence", "layer·tokens",
             _layer_tokens(_t, True),
             "full layers × context + sliding layers × min(context, window + tail) + chunked "
             "layers × min(context, chunk + tail); tail = max_num_batched_tokens − 1 for engines "
             "that page windows so (vLLM), layer groups padded", kind="int"),
    Quantity("kv_attention_bytes_per_sequence", "Attention KV per sequence", "B",
             _s * m("kv_elements_per_token_per_layer") * q("attended_layer_tokens"),
             "bytes per KV element × elements per layer-token × cached layer-tokens",
             display="bytes"),
    Quantity("state_bytes_per_sequence", "Linear-attention state per sequence", "B",
             a("state_bytes_per_element") * m("linear_attention_layers")
             * m("linear_state_elements_per_layer"),
             "linear-attention layers × state elements × state_bytes_per_element; independent "
             "of context", display="bytes"),
    Quantity("kv_bytes_per_sequence", "KV cache per sequence", "B",
             q("kv_attention_bytes_per_sequence") + q("state_bytes_per_sequence"),
             "attention KV (windows capped) + fixed linear-attention state", spec=True,
             display="bytes"),
    Quantity("kv_bytes_in_use", "KV cache held by the batch", "B",
             _b * q("kv_bytes_per_sequence"),
             "batch × KV per sequence, all GPUs: what the cache holds at this concurrency",
             display="bytes"),
    Quantity("kv_bytes_per_sequence_per_gpu", "KV per sequence per GPU", "B",
             q("kv_attention_bytes_per_sequence") * q("kv_share_per_gpu")
             + q("state_bytes_per_sequence") / _tp,
             "attention KV × the share one GPU stores + the state split over TP ranks",
             display="bytes"),
    Quantity("max_sequences", "Sequences that fit", "sequences",
             IF(q("weights_fit"),
                INT(q("kv_pool_bytes_per_gpu") / q("kv_bytes_per_sequence_per_gpu")), 0),
             "per-GPU pool / KV per sequence per GPU, whole sequences (0 when the weights do not "
             "fit)", kind="int", spec=True),
    Quantity("kv_pool_tokens", "KV pool", "tokens",
             IF(q("kv_bytes_per_sequence_per_gpu").eq(_t * q("kv_bytes_per_token_per_gpu")),
                INT(q("kv_pool_bytes_per_gpu") / q("kv_bytes_per_token_per_gpu")),
                INT(q("kv_pool_bytes_per_gpu") * _t / q("kv_bytes_per_sequence_per_gpu"))),
             "per-GPU pool / KV bytes per token per GPU, whole tokens; for windowed or hybrid "
             "models, sequences that fit × context (as engines report it), so it agrees with "
             "sequences that fit", kind="int", spec=True),
    Quantity("context_supported", "Context within the model's limit", "",
             OR(m("max_position_embeddings") <= 0, _t <= m("max_position_embeddings")),
             "context ≤ max_position_embeddings (true when the catalog gives no limit)",
             kind="bool"),
    Quantity("fits", "Fits", "",
             AND(q("weights_fit"), q("context_supported"), _b <= q("max_sequences")),
             "weights fit, the model supports the context, and batch ≤ sequences that fit",
             kind="bool", spec=True),
    Quantity("fit_reason", "Why it does not fit", "",
             IF(NOT(q("weights_fit")), "weights do not fit",
                IF(NOT(q("context_supported")), "context beyond the model's limit",
                   IF(_b > q("max_sequences"), "KV cache too small for the batch", "fits"))),
             "the first reason a configuration does not fit, or 'fits'", kind="text"),
    Quantity("crossover_tokens", "KV = weights at", "tokens",
             q("weight_bytes") / q("kv_bytes_per_token"),
             "live tokens at which the KV cache weighs as much as the weights", spec=True),
    # -- roofline decode (SPEC §3) --------------------------------------------------------------
    Quantity("experts_read_per_layer", "Experts read per MoE layer", "experts",
             _experts_read(_b),
             "expected distinct experts the batch routes to, assuming uniform independent "
             "routing: E × (1 − (1 − k/E)^batch), at most all experts"),
    Quantity("weight_bytes_read_per_step", "Weights read per step", "B",
             _weights_read(q("experts_read_per_layer")),
             "dense: all weights; MoE: all but the routed experts the batch does not read",
             display="bytes"),
    Quantity("decode_bytes_per_step", "Bytes read per decode step", "B",
             q("weight_bytes_read_per_step") + q("kv_bytes_in_use"),
             "weights read + the KV cache the batch holds, all GPUs", spec=True,
             display="bytes"),
    Quantity("decode_bytes_per_gpu", "Bytes read per step per GPU", "B",
             q("weight_bytes_read_per_step") / _tp + _b * q("kv_bytes_per_sequence_per_gpu"),
             "weights read / TP + batch × KV per sequence per GPU (replicated KV read on every "
             "rank)", display="bytes"),
    Quantity("decode_flops_per_step", "FLOPs per decode step", "FLOP",
             _b * (2 * m("params_active")
                   + 4 * m("num_attention_heads") * m("attention_head_dim")
                   * _layer_tokens(_t, False)),
             "batch × (2 × active parameters + 4 × query heads × head dim × attended "
             "layer-tokens, windows capped)", spec=True),
    Quantity("peak_flops_per_gpu", "Peak dense FLOP/s per GPU", "FLOP/s",
             TFLOPS * IF(AND(_compute.eq("fp8"), g("fp8_tflops") > 0), g("fp8_tflops"),
                         IF(AND(_compute.eq("fp4"), g("fp4_tflops") > 0), g("fp4_tflops"),
                            g("bf16_tflops"))),
             "dense tensor FLOP/s at the precision the multiplies run in: FP8/FP4 when the "
             "weights are and the GPU has the units, else BF16", display="rate"),
    Quantity("bandwidth_bytes_per_second", "Memory bandwidth per GPU", "B/s",
             g("bandwidth_tb_s") * TB_PER_S, "bandwidth_tb_s × 10^12", display="rate"),
    Quantity("bandwidth_efficiency_used", "Bandwidth efficiency used", "fraction",
             IF(a("bandwidth_efficiency").eq("auto"),
                IF(g("bandwidth_efficiency") > 0, g("bandwidth_efficiency"),
                   a("bandwidth_efficiency_fallback")), a("bandwidth_efficiency")),
             "bandwidth_efficiency; with 'auto' the GPU family's measured figure, else the "
             "fallback", display="ratio"),
    Quantity("compute_efficiency_used", "Compute efficiency used", "fraction",
             IF(a("compute_efficiency").eq("auto"),
                IF(AND(_compute.eq("fp4"), g("compute_efficiency_fp4") > 0),
                   g("compute_efficiency_fp4"),
                   IF(g("compute_efficiency") > 0, g("compute_efficiency"),
                      a("compute_efficiency_fallback"))), a("compute_efficiency")),
             "compute_efficiency; with 'auto' the GPU family's measured figure (its FP4 figure "
             "when the multiplies run in FP4), else the fallback", display="ratio"),
    Quantity("decode_memory_seconds", "Decode step, memory bound", "s",
             q("decode_bytes_per_gpu") / (q("bandwidth_bytes_per_second")
                                         * q("bandwidth_efficiency_used")),
             "bytes per GPU / (bandwidth × bandwidth efficiency)", display="seconds"),
    Quantity("decode_compute_seconds", "Decode step, compute bound", "s",
             q("decode_flops_per_step") / _tp / (q("peak_flops_per_gpu")
                                                 * q("compute_efficiency_used")),
             "FLOPs per GPU / (peak × compute efficiency)", display="seconds"),
    Quantity("decode_step_seconds", "Decode step", "s",
             MAX(q("decode_memory_seconds"), q("decode_compute_seconds")),
             "the larger of the memory and compute bounds", spec=True, display="seconds"),
    Quantity("decode_bound", "Decode bound by", "",
             IF(q("decode_compute_seconds") > q("decode_memory_seconds"), "compute", "memory"),
             "which bound sets the decode step", kind="text"),
    Quantity("decode_tokens_per_second", "Decode throughput", "tokens/s",
             _b / q("decode_step_seconds"), "batch / decode step (whole replica)", spec=True),
    Quantity("tokens_per_second_per_sequence", "Per-user speed", "tokens/s",
             1 / q("decode_step_seconds"), "1 / decode step", spec=True),
    Quantity("decode_intensity", "Decode arithmetic intensity", "FLOP/B",
             q("decode_flops_per_step") / q("decode_bytes_per_step"),
             "FLOPs per step / bytes per step", spec=True),
    Quantity("attention_intensity", "Attention arithmetic intensity", "FLOP/B",
             IF(m("is_mla"), m("num_attention_heads"),
                m("num_attention_heads") / m("kv_heads_effective")),
             "query heads per KV head (GQA group size); MLA shares one latent across all heads",
             spec=True),
    Quantity("ridge_intensity", "GPU ridge point", "FLOP/B",
             q("peak_flops_per_gpu") / q("bandwidth_bytes_per_second"),
             "peak FLOP/s / bandwidth: above it a step is compute-bound", spec=True),
    Quantity("prefill_flops", "Prefill FLOPs", "FLOP",
             2 * m("params_active") * _p
             + 2 * m("num_attention_heads") * m("attention_head_dim") * _prefill_pairs(_p),
             "2 × active parameters × prompt + attention 2 × layers × heads × head dim × prompt², "
             "halved for the causal mask (windows capped)", spec=True),
    Quantity("weights_read_seconds", "One read of all the weights", "s",
             q("weight_bytes") / (_tp * q("bandwidth_bytes_per_second")
                                  * q("bandwidth_efficiency_used")),
             "weights / TP / (bandwidth × efficiency): what a prefill pass reads at least once",
             display="seconds"),
    Quantity("ttft_seconds", "Time to first token (roofline)", "s",
             MAX(q("prefill_flops") / (_tp * q("peak_flops_per_gpu")
                                       * q("compute_efficiency_used")),
                 q("weights_read_seconds")),
             "prefill FLOPs / replica FLOP/s, never below one read of the weights",
             spec=True, display="seconds"),
    Quantity("cost_per_million_tokens", "Cost per million output tokens (rented, fully busy)",
             "USD",
             IF(q("fits"), g("price_per_hour_usd") * _tp / SECONDS_PER_HOUR
                / q("decode_tokens_per_second") * MILLION, "does not fit"),
             "GPU-hour price × TP / 3600 / decode tokens/s × 10^6: rented GPUs busy all the "
             "time, output tokens only (prompt tokens cost nothing here; `planner size` gives "
             "owned costs per input and output token); 'does not fit' when it cannot run",
             spec=True, display="usd"),
    # -- serving: what an engine achieves, per-step and communication costs included ----------
    Quantity("scale_up_bytes_per_second", "Scale-up bandwidth per GPU", "B/s",
             IF(g("scale_up_gb_s") > 0, g("scale_up_gb_s"), a("pcie_gb_s")) * GB,
             "scale_up_gb_s (NVLink, Infinity Fabric) × 10^9, else pcie_gb_s", display="rate"),
    Quantity("allreduce_latency_seconds", "All-reduce latency", "s",
             IF(g("allreduce_latency_us") > 0, g("allreduce_latency_us"),
                a("allreduce_latency_us_fallback")) / MILLION,
             "allreduce_latency_us of the GPU, else the fallback, in seconds",
             display="seconds"),
    Quantity("kernels_per_step", "Kernels per engine step", "kernels",
             m("attention_layers") * IF(m("is_mla"), a("kernels_mla_attention"),
                                        a("kernels_attention"))
             + m("linear_attention_layers") * a("kernels_linear_attention")
             + (_layers - m("moe_layers")) * a("kernels_dense_ffn")
             + m("moe_layers") * (a("kernels_moe_ffn")
                                  + IF(m("shared_expert_ffn") > 0, a("kernels_shared_expert"), 0)),
             "attention layers × kernels of their block (MLA or GQA) + linear-attention layers × "
             "theirs + dense FFN layers × kernels_dense_ffn + MoE layers × (kernels_moe_ffn + "
             "kernels_shared_expert where the model has a shared expert)", kind="int"),
    Quantity("step_overhead_seconds", "Fixed time per engine step", "s",
             q("kernels_per_step") * a("kernel_floor_us") / MILLION,
             "kernels per step × kernel_floor_us", display="seconds"),
    Quantity("step_seconds_per_running_sequence", "Engine time per running sequence", "s",
             _engine_default("step_overhead_us_per_sequence", "us_per_sequence") / MILLION,
             "step_overhead_us_per_sequence, or with 'auto' the engine's figure, in seconds",
             display="seconds"),
    Quantity("serving_batch", "Sequences decoding together", "sequences",
             MAX(1, MIN(_b, q("max_sequences"), q("max_num_seqs_effective"))),
             "the concurrency, capped by the sequences that fit and the engine's max_num_seqs",
             kind="int"),
    Quantity("decode_context", "Mean context while decoding", "tokens",
             IF(_o > 0, _p + _o / 2, _t),
             "prompt + output / 2 when the output length is given, else the context"),
    Quantity("kv_read_bytes_per_sequence_per_gpu", "KV read per sequence per step per GPU", "B",
             _s * m("kv_elements_per_token_per_layer") * _layer_tokens(q("decode_context"), False)
             * q("kv_share_per_gpu") + q("state_bytes_per_sequence") / _tp,
             "KV one sequence reads per step at the mean decode context (windows capped at the "
             "window), per GPU, plus its state", display="bytes"),
    Quantity("serving_flops_per_sequence", "GEMM FLOPs per sequence per step", "FLOP",
             2 * m("params_active"),
             "2 × active parameters: the matrix multiplies one decoded token costs"),
    Quantity("serving_attention_flops_per_sequence", "Attention FLOPs per sequence per step",
             "FLOP",
             4 * m("num_attention_heads") * m("attention_head_dim")
             * _layer_tokens(q("decode_context"), False),
             "4 × heads × head dim × attended layer-tokens at the mean decode context"),
    Quantity("serving_weight_bytes_read", "Weights read per serving step", "B",
             _weights_read(q("serving_experts_read")),
             "as weights read per step, at the serving batch", display="bytes"),
    Quantity("serving_experts_read", "Experts read per MoE layer (serving)", "experts",
             _experts_read(q("serving_batch")),
             "E × (1 − (1 − k/E)^serving batch)"),
    Quantity("serving_memory_seconds", "Serving step: reading the weights", "s",
             q("serving_weight_bytes_read") / _tp
             / (q("bandwidth_bytes_per_second") * q("bandwidth_efficiency_used")),
             "weights read / TP / (bandwidth × efficiency): the GEMMs' memory bound",
             display="seconds"),
    Quantity("serving_compute_seconds", "Serving step: GEMM compute", "s",
             q("serving_batch") * q("serving_flops_per_sequence") / _tp
             / (q("peak_flops_per_gpu") * q("compute_efficiency_used")),
             "serving batch × GEMM FLOPs per sequence / TP / (peak × efficiency): the GEMMs' "
             "compute bound", display="seconds"),
    Quantity("serving_attention_seconds_per_sequence", "Attention time per sequence per step",
             "s",
             MAX(q("kv_read_bytes_per_sequence_per_gpu")
                 / (q("bandwidth_bytes_per_second") * q("bandwidth_efficiency_used")),
                 q("serving_attention_flops_per_sequence") / _tp
                 / (q("peak_flops_per_gpu") * q("compute_efficiency_used"))),
             "the larger of its KV read / (bandwidth × efficiency) and its attention FLOPs / TP / "
             "(peak × efficiency): attention kernels run after the GEMMs, not alongside",
             display="seconds"),
    Quantity("serving_attention_seconds", "Serving step: attention", "s",
             q("serving_batch") * q("serving_attention_seconds_per_sequence"),
             "serving batch × attention time per sequence", display="seconds"),
    Quantity("decode_allreduce_seconds", "Decode all-reduce time per step", "s",
             allreduce_seconds(q("serving_batch")),
             "TP ≥ 2: 2 × layers × (latency + 2(TP−1)/TP × batch × hidden × activation bytes / "
             "scale-up bandwidth)", display="seconds"),
    Quantity("prefill_compute_seconds", "Prefill compute per request", "s",
             q("prefill_flops") / (_tp * q("peak_flops_per_gpu") * q("compute_efficiency_used"))
             + allreduce_seconds(_p),
             "prefill FLOPs / replica FLOP/s + its all-reduces (prompt × hidden activations)",
             display="seconds"),
    Quantity("prefill_interleaved_seconds", "Prefill of one request inside decode steps", "s",
             q("prefill_flops") / (_tp * q("peak_flops_per_gpu") * q("compute_efficiency_used"))
             + allreduce_seconds(_p, latency=False),
             "prefill FLOPs / replica FLOP/s + the all-reduce traffic of its activations; the "
             "latency is paid once by the step its chunk rides in", display="seconds"),
    Quantity("prefills_per_step", "Prompts started per decode step", "requests",
             IF(_o > 0, q("serving_batch") / _o, 0),
             "serving batch / output tokens: in a steady state each running sequence ends, "
             "and a new one starts, once every output-length steps"),
    Quantity("step_fixed_seconds", "Step time independent of batch", "s",
             q("step_overhead_seconds") + allreduce_seconds(None),
             "fixed step time + all-reduce latencies", display="seconds"),
    Quantity("prefill_pass_fixed_seconds", "Fixed cost of a prefill pass of its own", "s",
             q("step_fixed_seconds") + q("weights_read_seconds"),
             "an engine that runs prefill apart from decoding pays, for each prefill pass, the "
             "fixed step time, the all-reduce latencies and a full read of the weights",
             display="seconds"),
    Quantity("prefill_per_step_seconds", "Prefill time per decode step", "s",
             IF(e("mixes_prefill"),
                q("prefills_per_step") * q("prefill_interleaved_seconds"),
                MIN(q("prefills_per_step"), 1) * q("prefill_pass_fixed_seconds")
                + q("prefills_per_step") * q("prefill_interleaved_seconds")),
             "engines that mix prompt chunks into decode steps (vLLM, TensorRT-LLM): prompts "
             "per step × prefill inside a decode step; engines that run prefill as a pass of "
             "its own (SGLang by default): at most one pass per decode step, each with its "
             "fixed cost, plus the prompts' FLOPs and all-reduce traffic", display="seconds"),
    Quantity("prefill_seconds", "Prefill alone (time to first token, no queue)", "s",
             MAX(q("prefill_compute_seconds"), q("weights_read_seconds"))
             + q("step_overhead_seconds"),
             "prefill compute with its all-reduces, never below one read of the weights, + the "
             "fixed step time", display="seconds"),
    Quantity("tpot_seconds", "Time per output token", "s",
             q("step_overhead_seconds")
             + q("serving_batch") * q("step_seconds_per_running_sequence")
             + MAX(q("serving_memory_seconds"), q("serving_compute_seconds"))
             + q("serving_attention_seconds")
             + q("decode_allreduce_seconds")
             + IF(_o > 0, q("prefill_per_step_seconds"), 0),
             "fixed step time + engine time per running sequence × serving batch + the GEMMs "
             "(the larger of reading the weights and their compute) + attention + all-reduces "
             "+ the prefill the engine interleaves (serving batch / output tokens × prefill of "
             "one request inside decode steps)", spec=True, display="seconds"),
    Quantity("serving_output_tokens_per_second", "Serving output throughput", "tokens/s",
             q("serving_batch") / q("tpot_seconds"),
             "serving batch / time per output token: one replica's steady-state output",
             spec=True),
]

MODEL_BY_NAME = {x.name: x for x in MODEL_QUANTITIES}
ROW_BY_NAME = {x.name: x for x in ROW_QUANTITIES}
QUANTITY_BY_NAME: dict[str, Quantity] = dict(ROW_BY_NAME)  # fleet quantities register here
SPEC_KEYS = [x.name for x in ROW_QUANTITIES if x.spec]


def assumptions_used(quantity: Quantity) -> list[str]:
    """The assumptions a quantity depends on, through every quantity it reads: what an
    estimate must say it rests on. Format sizes appear as bytes_per_param / bytes_per_kv_element
    (the chosen format's), catalog prices as price_per_hour_usd."""
    found: set[str] = set()
    seen: set[tuple[str, str]] = set()
    stack = [quantity.expr]
    while stack:
        for kind, name in stack.pop().refs():
            if (kind, name) in seen:
                continue
            seen.add((kind, name))
            if kind == "assume":
                found.add(name)
            elif kind == "weights" and name == "bytes_per_param":
                found.add("bytes_per_param")
            elif kind == "kv":
                found.add("bytes_per_kv_element")
            elif kind == "engine":
                found.add("engine")
            elif kind == "server" and name == "price_usd":
                found.add("server price_usd")
            elif kind == "gpu" and name == "price_per_hour_usd":
                found.add("price_per_hour_usd")
            elif kind == "q":
                stack.append(QUANTITY_BY_NAME[name].expr)
            elif kind == "model" and name in MODEL_BY_NAME:
                stack.append(MODEL_BY_NAME[name].expr)
    return sorted(found)
