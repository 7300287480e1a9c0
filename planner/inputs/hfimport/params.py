"""Parameter counts from a model's shape (total and active) and from its vision config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def vision_params(vision: Mapping[str, Any], top: Mapping[str, Any], text_hidden: int) -> tuple[
        int, str]:
    """Vision tower + projector parameters from vision_config (norms and biases included)."""
    kind = str(vision.get("model_type", ""))
    h = int(vision.get("hidden_size") or 0)
    inner = int(vision.get("intermediate_size") or 4 * h)
    layers = int(vision.get("num_hidden_layers") or vision.get("depth") or 0)
    patch = int(vision.get("patch_size") or 14)
    image = int(vision.get("image_size") or 224)
    channels = int(vision.get("num_channels") or 3)
    patches = (image // patch) ** 2
    if kind == "pixtral":  # no biases, gated MLP, RMSNorm, rotary positions
        tower = layers * (4 * h * h + 3 * h * inner + 2 * h) + channels * patch * patch * h + h
    else:  # ViT: q, k, v, o and MLP with biases, two LayerNorms per layer
        tower = layers * (4 * h * h + 4 * h + 2 * h * inner + inner + h + 4 * h)
        tower += channels * patch * patch * h + h + patches * h + 2 * h
        if kind == "llama4_vision_model":
            tower += h + h + 2 * h  # class embedding, its position, the pre-layer norm
    top_type = str(top.get("model_type", ""))
    if top_type == "gemma3":
        projector = h * text_hidden + h
    elif top_type == "llama4":
        proj_in = int(vision.get("projector_input_dim") or 4096)
        proj_out = int(vision.get("projector_output_dim") or 4096)
        ratio = float(vision.get("pixel_shuffle_ratio") or 0.5)
        projector = (int(h / ratio ** 2) * proj_in + proj_out * proj_out
                     + int(vision.get("vision_output_dim") or proj_out) * text_hidden)
    elif top_type == "mistral3":
        merge = int(top.get("spatial_merge_size") or 2)
        projector = h + h * merge * merge * h + h * text_hidden + text_hidden * text_hidden
    elif "llm_config" in top:  # InternVL: LayerNorm + two linears over 2x2-merged features
        merge = int(round(1 / float(top.get("downsample_ratio") or 0.5))) ** 2
        projector = 2 * h * merge + h * merge * text_hidden + text_hidden * (text_hidden + 2)
    else:
        projector = h * text_hidden + text_hidden * text_hidden
    return tower + projector, (f"{kind or 'vision'} tower {tower:,} + projector {projector:,}")


def shape_params(values: Mapping[str, object]) -> tuple[int, int]:
    """Total and active parameters of the text model from its shape: attention (softmax, MLA
    or Gated DeltaNet) and SwiGLU FFN or MoE per layer, routers and embeddings; norms and
    biases are left out (well under 0.1%)."""

    def n(name: str) -> int:
        value = values.get(name)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

    layers, hidden, heads = n("num_hidden_layers"), n("hidden_size"), n("num_attention_heads")
    kv = n("num_key_value_heads") or heads
    head_dim = n("head_dim") or hidden // heads
    kinds = values.get("layer_types")
    kind_of = list(kinds) if isinstance(kinds, list) else ["full_attention"] * layers
    if n("kv_lora_rank"):
        q = n("qk_nope_head_dim") + n("qk_rope_head_dim")
        query = (hidden * n("q_lora_rank") + n("q_lora_rank") * heads * q if n("q_lora_rank")
                 else hidden * heads * q)
        softmax = (query + hidden * (n("kv_lora_rank") + n("qk_rope_head_dim"))
                   + n("kv_lora_rank") * heads * (n("qk_nope_head_dim") + n("v_head_dim"))
                   + heads * n("v_head_dim") * hidden)
    else:
        gate = 2 if values.get("_gated_query") else 1  # Qwen3-Next: query and output gate
        softmax = hidden * heads * head_dim * (gate + 1) + 2 * hidden * kv * head_dim
    keys = n("linear_num_key_heads") * n("linear_key_head_dim")
    vals = n("linear_num_value_heads") * n("linear_value_head_dim")
    linear = (hidden * (2 * keys + 2 * vals) + hidden * 2 * n("linear_num_value_heads")
              + (2 * keys + vals) * n("linear_conv_kernel_dim") + vals * hidden
              + 2 * n("linear_num_value_heads") + n("linear_value_head_dim"))
    experts = n("num_local_experts") + n("num_experts") + n("n_routed_experts")
    expert_ffn = n("moe_intermediate_size") or n("intermediate_size")
    shared = n("shared_expert_intermediate_size") or n("n_shared_experts") * expert_ffn
    first, every = n("first_k_dense_replace"), n("interleave_moe_layer_step") or 1
    total = routed = 0
    for i in range(layers):
        total += linear if kind_of[i] == "linear_attention" else softmax
        if experts and i >= first and (i - first + 1) % every == 0:
            routed += experts * 3 * hidden * expert_ffn
            total += 3 * hidden * shared + hidden * experts + (hidden if values.get(
                "shared_expert_intermediate_size") else 0)
        else:
            total += 3 * hidden * (n("intermediate_size_mlp") or n("intermediate_size"))
    total += routed + n("vocab_size") * hidden * (1 if values.get("tie_word_embeddings") else 2)
    k = n("num_experts_per_tok")
    active = total - routed + (routed * k // experts if experts else 0)
    return total, active
