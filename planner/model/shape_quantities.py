"""Model-scope quantities: what a model's catalog shape (its config.json fields) implies.

Head and KV widths, attention layers, KV elements and bytes per token, linear-attention state,
experts and FFN widths, and parameter counts (total, active, embeddings). They depend on the
model alone (absent fields read as 0, as a blank cell does) and become the derived columns of
the workbook's Models sheet; ``planner.model.quantities`` assembles them in this order.
"""

from __future__ import annotations

from planner.model.expr import IF, INT, MAX, Ref
from planner.model.quantity import Quantity, m

_is_mla = m("kv_lora_rank") > 0
_hidden = m("hidden_size")
_layers = m("num_hidden_layers")
_heads = m("num_attention_heads")

SHAPE_QUANTITIES: list[Quantity] = [
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
