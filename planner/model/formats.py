"""Numeric formats for weights and the KV cache: bytes per parameter or element, scales included.

Each figure is an assumption with its source (catalog-facts Part C). They are editable in the
workbook's Formats sheet and with ``--set bytes_per_param_FORMAT=N`` /
``--set bytes_per_kv_element_FORMAT=N``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WeightFormat:
    id: str
    bytes_per_param: float
    compute: str  # precision the matrix multiplies run in: "bf16", "fp8" or "fp4"
    description: str
    source: str
    embeddings_16bit: bool = False  # checkpoints keep embeddings and the LM head in BF16
    experts_only: bool = False  # only MoE expert weights are stored in this format
    expert_pad: int = 1  # engines' MoE kernels pad expert matrices to multiples of this

    @property
    def setting(self) -> str:
        """Its assumption name: the --set name and the workbook's defined name."""
        return f"bytes_per_param_{self.id}"


@dataclass(frozen=True)
class KvFormat:
    id: str
    bytes_per_element: float
    description: str
    source: str

    @property
    def setting(self) -> str:
        """Its assumption name: the --set name and the workbook's defined name."""
        return f"bytes_per_kv_element_{self.id}"


WEIGHT_FORMATS: dict[str, WeightFormat] = {
    f.id: f
    for f in [
        WeightFormat("bf16", 2.0, "bf16", "bfloat16, 16 bits", "IEEE/bfloat16 width"),
        WeightFormat("fp16", 2.0, "bf16", "float16, 16 bits (computes at the 16-bit tensor rate)",
                     "IEEE 754 half width"),
        WeightFormat("fp8", 1.0, "fp8",
                     "FP8 E4M3, per-tensor FP32 scale (block-128 scales add 0.02%)",
                     "vLLM/SGLang FP8 docs (per-tensor FP32 scale); DeepSeek-V3 config "
                     "weight_block_size [128,128]; embeddings and LM head stay BF16 "
                     "(llm-compressor, ModelOpt ignore lists)", embeddings_16bit=True),
        WeightFormat("int8", 1.0, "bf16",
                     "INT8 W8A8 (SmoothQuant, per-channel scale); computed at the BF16 rate "
                     "because the catalogs carry no INT8 TOPS",
                     "SmoothQuant per-channel layout; catalog-facts C1", embeddings_16bit=True),
        WeightFormat("int4", 0.51953125, "bf16",
                     "INT4 GPTQ/AWQ, group 128: 4-bit weights + FP16 scale + 4-bit zero per group "
                     "(4.156 bits); weight-only, multiplies in BF16",
                     "vLLM/AutoAWQ kernel layout (qweight, scales, qzeros packed 8 per int32); "
                     "embeddings and LM head stay FP16", embeddings_16bit=True),
        WeightFormat("nvfp4", 0.5625, "fp4",
                     "NVFP4: E2M1 values + FP8 E4M3 scale per 16 (4.5 bits)",
                     "NVIDIA NVFP4 format: 72 bits per 16-value block; ModelOpt keeps embeddings "
                     "and LM head in BF16", embeddings_16bit=True),
        WeightFormat("mxfp4", 0.53125, "fp4",
                     "MXFP4 (OCP MX): E2M1 values + UE8M0 scale per 32 (4.25 bits)",
                     "OCP Microscaling spec; gpt-oss model card: 4.25 bits per parameter for the "
                     "MoE experts, attention and embeddings BF16 (quantization_config "
                     "modules_to_not_convert); vLLM's MXFP4 MoE kernels pad hidden and expert "
                     "widths to multiples of 256 (2880 -> 3072)", embeddings_16bit=True,
                     experts_only=True, expert_pad=256),
    ]
}

KV_FORMATS: dict[str, KvFormat] = {
    f.id: f
    for f in [
        KvFormat("bf16", 2.0, "bfloat16 (vLLM --kv-cache-dtype auto for BF16 models)",
                 "vLLM vllm/config/cache.py CacheDType"),
        KvFormat("fp16", 2.0, "float16", "vLLM CacheDType float16"),
        KvFormat("fp8", 1.0, "FP8 E4M3 or E5M2 with a per-tensor FP32 scale (negligible)",
                 "vLLM quantized KV cache docs; SGLang quantized_kv_cache.md"),
        KvFormat("int8", 1.0, "INT8 per token-head (scale metadata not counted)",
                 "vLLM CacheDType int8_per_token_head; SGLang --int8-kv-cache"),
        KvFormat("nvfp4", 0.5625, "NVFP4: 4-bit values + FP8 scale per 16",
                 "TensorRT-LLM KV_CACHE_QUANT_ALGO_LIST NVFP4; SGLang fp4_e2m1 (block 16)"),
    ]
}

COMPUTE_PRECISIONS = ("bf16", "fp8", "fp4")
