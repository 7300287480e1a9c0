"""Row-scope memory quantities: where one configuration's GPU memory goes.

Weights as the engine loads them, KV cache per token, the memory the engine sizes against
(device memory, profile-run activations, non-torch and CUDA-graph memory, the usable budget and
the KV pool), then KV per sequence as the engine pages it, the sequences and tokens that fit,
and whether and why a configuration fits. ``planner.model.quantities`` puts them first in the
row order, ahead of the speed quantities.
"""

from __future__ import annotations

from planner.model.expr import AND, IF, INT, MAX, MIN, NOT, OR, Expr, Ref
from planner.model.quantity import Quantity, a, e, engine_default, g, layer_tokens, m, q, v
from planner.model.units import GB, GiB, MiB

_hidden = m("hidden_size")
_tp = v("tp")
_t = v("context")
_b = v("batch")
_s = Ref("kv", "bytes_per_element")
_w = Ref("weights", "bytes_per_param")
_w16 = a("bytes_per_param_bf16")
_act = a("activation_bytes_per_element")


def _ceil(x: Expr) -> Expr:
    return -INT(-x)


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

MEMORY_QUANTITIES: list[Quantity] = [
    # -- weights, as the engine loads them ---------------------------------------------------
    Quantity("expert_weight_bytes", "Routed-expert weights", "B",
             IF(e("weights_as_loaded"),
                m("moe_layers") * m("experts") * 3 * _padded(_hidden)
                * _padded(m("expert_ffn") / _tp) * _tp,
                m("routed_expert_params")) * _w,
             "routed-expert parameters × bytes per parameter; as engines load them, hidden and "
             "per-rank expert widths rounded up to the format's kernel padding (MXFP4: 256)",
             display="bytes"),
    Quantity("tensor_weight_bytes", "Weights counted tensor by tensor", "B",
             m("embedding_params") * IF(Ref("weights", "embeddings_16bit"), _w16, _w)
             + m("routed_expert_params") * _w
             + MAX(0, m("params_total") - m("embedding_params") - m("routed_expert_params"))
             * IF(Ref("weights", "experts_only"), _w16, _w),
             "embeddings and LM head at 16 bits where the format keeps them so, routed experts "
             "in the format, the rest in the format (at 16 bits for expert-only formats such as "
             "MXFP4); no vision tower", display="bytes"),
    Quantity("checkpoint_weight_bytes", "Weights as stored (checkpoint)", "B",
             IF(AND(m("checkpoint_bytes") > 0, m("checkpoint_format").eq(v("weights"))),
                m("checkpoint_bytes"), q("tensor_weight_bytes"))
             + m("vision_params") * _w16,
             "the checkpoint's exact bytes when it is stored in this format (its "
             "model.safetensors.index.json total_size); else the weights counted tensor by "
             "tensor; plus a vision tower at 16 bits", display="bytes"),
    Quantity("expert_padding_bytes", "MoE kernel padding", "B",
             e("weights_as_loaded") * (q("expert_weight_bytes") - m("routed_expert_params") * _w),
             "engines' MoE kernels pad the hidden and per-rank expert widths to the format's "
             "multiple (MXFP4: 256) when they load the experts: padded expert bytes − stored "
             "expert bytes (0 for formats without padding and for engine=none)",
             display="bytes"),
    Quantity("weight_bytes", "Weights", "B",
             IF(e("weights_as_loaded"),
                q("checkpoint_weight_bytes") + q("expert_padding_bytes"),
                IF(AND(m("checkpoint_bytes") > 0, m("checkpoint_format").eq(v("weights"))),
                   m("checkpoint_bytes"), m("params_total") * _w)),
             "as engines load them: the weights as stored + the MoE kernels' padding; "
             "engine=none: the checkpoint's exact bytes in this format, else total parameters × "
             "bytes per parameter (SPEC)", spec=True, display="bytes"),
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
                MIN(q("max_num_batched_tokens_effective"), a("moe_chunk_tokens"))
                * m("num_experts_per_tok")
                * (MAX(2 * m("expert_ffn") / _tp, _hidden) + m("expert_ffn") / _tp) * _act, 0),
             "tokens a fused-MoE call holds (max batched tokens, at most moe_chunk_tokens) × "
             "top-k × (max(2 × expert FFN / TP, hidden) + expert FFN / TP) × activation bytes: "
             "vLLM's fused_experts caches, the first and third sharing one buffer; its workspace "
             "manager keeps them across the run", display="bytes"),
    Quantity("activation_bytes_per_gpu", "Activation peak per GPU", "B",
             MAX(q("sampler_bytes_per_gpu"), q("forward_bytes_per_gpu"))
             + q("moe_workspace_bytes_per_gpu")
             + m("vision_params") * a("vision_profile_bytes_per_param"),
             "the larger of sampler and dense forward, + MoE workspace, + a vision encoder's "
             "profile (tower parameters × vision_profile_bytes_per_param)", display="bytes"),
    Quantity("nvls_bytes_per_gpu", "NVLink SHARP buffers per GPU", "B",
             IF(_tp >= 3, _tp * g("nvls_buffer_mib_per_rank") * MiB, 0),
             "NCCL sets up NVLink SHARP (NVLS) on NVSwitch GPUs for groups of more than 2: "
             "each GPU holds a buffer per head of the group, TP × nvls_buffer_mib_per_rank "
             "(NCCL: channels × 2 × chunk × steps)", display="bytes"),
    Quantity("non_torch_bytes_per_gpu", "Non-torch memory per GPU", "B",
             engine_default("non_torch_gib_per_gpu", "non_torch_gib") * GiB
             + IF(_tp > 1, a("comm_buffer_gib_per_gpu") * GiB
                  * IF(g("scale_up_gb_s") > 0, 1, 0.1), 0)
             + q("nvls_bytes_per_gpu"),
             "non_torch_gib_per_gpu ('auto': the engine's figure) + at TP ≥ 2 the communication "
             "buffers (comm_buffer_gib_per_gpu; a tenth over PCIe) + the NVLink SHARP buffers",
             display="bytes"),
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
             layer_tokens(_t, True),
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
]
