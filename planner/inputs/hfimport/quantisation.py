"""The weight format a checkpoint is stored in, read from its quantization_config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def quant_format(data: Mapping[str, Any]) -> tuple[str | None, str]:
    """The planner weight format a quantization_config stores, and words for the notes."""
    method = str(data.get("quant_method") or data.get("quant_algo") or "").lower()
    keep = data.get("modules_to_not_convert") or data.get("ignore") or data.get(
        "llm_int8_skip_modules") or data.get("exclude_modules")
    kept = f"; kept in 16 bits: {', '.join(map(str, keep))}" if keep else ""
    if method == "fp8" or method == "fbgemm_fp8":
        block = data.get("weight_block_size")
        scales = (f"block-wise {'x'.join(map(str, block))} scales" if block
                  else "per-tensor or per-channel scales")
        return "fp8", f"FP8 ({data.get('fmt', 'e4m3')}, {scales}){kept}"
    if method == "mxfp4":
        return "mxfp4", f"MXFP4 (4-bit, shared 8-bit scale per 32){kept}"
    if method in ("gptq", "awq", "auto-round", "autoround", "gptq_marlin", "awq_marlin"):
        bits = data.get("bits") or data.get("w_bit")
        group = data.get("group_size") or data.get("q_group_size")
        words = f"{method.upper()} {bits}-bit, group {group}{kept}"
        return {4: "int4", 8: "int8"}.get(bits if isinstance(bits, int) else 0), words
    if method == "bitsandbytes":
        if data.get("load_in_8bit"):
            return "int8", f"bitsandbytes LLM.int8 (8-bit){kept}"
        kind = data.get("bnb_4bit_quant_type", "nf4")
        return None, f"bitsandbytes 4-bit {kind}{kept}"
    if method == "compressed-tensors":
        found: list[str] = []
        for group in (data.get("config_groups") or {}).values():
            weights = group.get("weights") or {} if isinstance(group, dict) else {}
            bits, kind = weights.get("num_bits"), weights.get("type")
            size = weights.get("group_size")
            fmt: str | None = {(8, "float"): "fp8", (8, "int"): "int8",
                               (4, "int"): "int4"}.get((int(bits or 0), str(kind)))
            if (bits, kind) == (4, "float"):
                fmt = "nvfp4" if size == 16 else "mxfp4" if size == 32 else None
            if fmt:
                found.append(fmt)
        scheme = str(data.get("format", ""))
        if not found and "nvfp4" in scheme:
            found.append("nvfp4")
        fmt = max(set(found), key=found.count) if found else None
        kinds = ", ".join(sorted(set(found))) or "unrecognised"
        return fmt, f"compressed-tensors {scheme or 'scheme'} ({kinds}){kept}"
    if method == "modelopt" or "quant_algo" in data:
        algo = str(data.get("quant_algo", "")).upper()
        fmt = {"FP8": "fp8", "NVFP4": "nvfp4", "W4A16_AWQ": "int4", "W4A8_AWQ": "int4",
               "W8A8_SQ_PER_CHANNEL": "int8"}.get(algo)
        return fmt, f"ModelOpt {algo or 'quantization'}{kept}"
    return None, f"quant_method '{method or 'unknown'}', not recognised{kept}"
