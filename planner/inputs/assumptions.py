"""The named assumptions (SPEC §5): what the arithmetic cannot know exactly.

Each one has a unit, a default, the range that makes sense and the evidence for the default.
The same names are the workbook's defined names and the ``--set`` names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.errors import ArgumentError
from planner.model.engines import ENGINES


@dataclass(frozen=True)
class Assumption:
    name: str
    label: str
    unit: str
    default: float | str
    reason: str
    source: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    auto: bool = False  # "auto" is accepted: the planner models the value itself
    group: str = "engine"  # engine | speed | site | finance: where the Assumptions sheet lists it

    def parse(self, text: str) -> float | str:
        """Turn a ``--set`` value into a checked value, or say what would be right."""
        if self.auto and text.strip().lower() == "auto":
            return "auto"
        if self.choices:
            value = text.strip().lower()
            if value not in self.choices:
                raise ArgumentError(
                    f"--set {self.name}={text}: must be one of {', '.join(self.choices)}"
                )
            return value
        try:
            number = float(text)
        except ValueError:
            also = " or 'auto'" if self.auto else ""
            raise ArgumentError(
                f"--set {self.name}={text}: not a number; expected {self.unit} "
                f"between {self.minimum:g} and {self.maximum:g}{also}"
            ) from None
        if not math.isfinite(number):
            raise ArgumentError(f"--set {self.name}={text}: must be a finite number")
        lo, hi = self.minimum, self.maximum
        if (lo is not None and number < lo) or (hi is not None and number > hi):
            raise ArgumentError(
                f"--set {self.name}={text}: out of range; expected {self.unit} "
                f"between {lo:g} and {hi:g} (default {self.default})"
            )
        return number


# Kernels each block of a layer runs in a decode step, counted from the engines' model code
# (docs/engines.md): the step's fixed cost is their sum over the model's layers × kernel_floor_us.
KERNEL_COUNTS = [
    ("kernels_attention", "Kernels of a GQA/MHA attention block", 6,
     "input norm, QKV projection, rotary, KV-cache write, attention, output projection "
     "(vLLM/SGLang llama.py, qwen3.py decode path with fused add-norm)"),
    ("kernels_mla_attention", "Kernels of an MLA attention block", 12,
     "input norm, fused q_a/kv_a projection, two low-rank norms, q_b projection, the absorbed "
     "query and value BMMs, rotary, KV-cache write, attention with its split combine, output "
     "projection (DeepSeek-V2/V3 decode path)"),
    ("kernels_linear_attention", "Kernels of a linear-attention block", 8,
     "Gated DeltaNet: norm, two input projections, short convolution, gating, recurrent update, "
     "gated norm, output projection (Qwen3-Next decode path)"),
    ("kernels_dense_ffn", "Kernels of a dense FFN block", 4,
     "post-attention norm, gate/up projection, activation, down projection"),
    ("kernels_moe_ffn", "Kernels of an MoE FFN block", 8,
     "norm, router projection, top-k, token sort/align, the two grouped expert GEMMs, "
     "activation, weighted sum (fused_moe decode path)"),
    ("kernels_shared_expert", "Kernels a shared expert adds", 4,
     "gate/up projection, activation, down projection and the add into the routed sum"),
]

ASSUMPTIONS: dict[str, Assumption] = {
    a.name: a
    for a in [
        # -- the engine and its memory policy -------------------------------------------------
        Assumption(
            "engine", "Serving engine whose memory policy sizes the KV pool",
            "vllm|sglang|trtllm|none", "vllm",
            "vLLM is the most used open engine; 'none' is SPEC's arithmetic (the model's own "
            "need, no engine policy), which the published reference cases describe",
            "docs/engines.md; engine table on the Assumptions sheet",
            choices=tuple(ENGINES),
        ),
        Assumption(
            "gpu_memory_utilization", "Memory fraction the engine may use", "fraction", 0.9,
            "vLLM's gpu_memory_utilization default; for engine=sglang it is "
            "mem_fraction_static, for engine=trtllm kv_cache_free_gpu_mem_fraction (each "
            "applied the way that engine applies it)",
            "vLLM vllm/config/cache.py; SGLang server_arguments.md; TensorRT-LLM KvCacheConfig",
            minimum=0.05, maximum=1.0,
        ),
        Assumption(
            "speed_basis", "Serving speed used for latency targets", "measured|model",
            "measured",
            "measured divides the model's serving speed by the median planner ÷ published "
            "ratio measured for the GPU, engine and model class (dense or MoE), so a fleet is "
            "not sized at 99 % of a target on a model known to be optimistic there; 1 where "
            "nothing was measured; and lengthens the first token by the engine's measured "
            "first-token error beyond that (ttft_margin_ratio). model uses the model's speed "
            "as it is",
            "docs/accuracy.md; catalogs/measured-accuracy.yaml",
            choices=("measured", "model"), group="speed",
        ),
        Assumption(
            "memory_basis", "GPU memory figure used for sizing", "engine|reported|marketed",
            "engine",
            "Engines size against the total CUDA/ROCm reports (79.19 GiB on an H100), below "
            "nvidia-smi's 81,559 MiB and the marketed 80 GB; GPUs without an engine figure "
            "fall back to nvidia-smi MiB, then to marketed GB",
            "vLLM and SGLang startup logs (docs/accuracy.md); catalogs/gpus.yaml",
            choices=("engine", "reported", "marketed"),
        ),
        Assumption(
            "overhead_gib_per_gpu", "Runtime memory per GPU outside weights and KV", "GiB",
            "auto",
            "'auto' models it from the mechanism: activation peak of the engine's profile run "
            "+ non-torch memory + communication buffers at TP ≥ 2 + a vision encoder's profile; "
            "a number pins it",
            "docs/engines.md; vLLM V1 memory profiling logs",
            minimum=0.0, maximum=1024.0, auto=True,
        ),
        Assumption(
            "max_num_seqs", "Most sequences the engine schedules at once", "sequences", "auto",
            "'auto' is the engine's default: vLLM serve 1024 on GPUs with ≥ 70 GiB, else 256; "
            "TensorRT-LLM max_batch_size 2048. Sizes the sampler's profile and caps a batch",
            "vLLM engine/arg_utils.py; TensorRT-LLM build defaults",
            minimum=1, maximum=65536, auto=True,
        ),
        Assumption(
            "max_num_batched_tokens", "Most tokens in one engine step", "tokens", "auto",
            "'auto' is the engine's default: vLLM serve 8192 on GPUs with ≥ 70 GiB, else 2048. "
            "Bounds the profile run's forward pass and sliding-window pages",
            "vLLM engine/arg_utils.py",
            minimum=1, maximum=1048576, auto=True,
        ),
        Assumption(
            "sampler_bytes_per_logit", "Sampler memory per logit in the profile run", "bytes",
            15.0,
            "the profile run samples max_num_seqs × vocabulary logits with top-k and top-p "
            "set: FP32 logits (4 bytes) and the top-k/top-p filter's buffers. vLLM from 0.17 "
            "filters with a Triton kernel (PR #33538; 384 MB for 256 × 131,072 logits in PR "
            "#32558, about 11.5 bytes), and its 0.17-0.19 logs of seven dense models give "
            "14.4-16 bytes in all. Earlier vLLM sorted the whole vocabulary in PyTorch (1.25 "
            "GB for the same logits, 37 bytes): set 37 for vLLM before 0.17 (planner "
            "calibrate and the accuracy report do so from the log's version)",
            "docs/engines.md; docs/assumption-evidence.md; llm-d-planner accuracy logs (PR "
            "#205); vllm-project/vllm PRs #32558, #33538",
            minimum=0.0, maximum=64.0,
        ),
        Assumption(
            "activation_bytes_per_element", "Bytes per activation element", "bytes", 2.0,
            "activations run in the 16-bit model dtype: the profile run's forward pass, the "
            "fused-MoE workspace",
            "vLLM fused_moe.py fused_experts_impl (caches in the activation dtype)",
            minimum=0.5, maximum=8.0,
        ),
        Assumption(
            "moe_chunk_tokens", "Tokens one fused-MoE call holds at most", "tokens", 32768.0,
            "vLLM runs the fused MoE over at most VLLM_FUSED_MOE_CHUNK_SIZE tokens at a time "
            "(default 32,768) and sizes its workspace for one chunk, so a profile over more "
            "batched tokens (vLLM V0 without chunked prefill, up to max_model_len) caps the "
            "MoE workspace there",
            "vllm-project/vllm vllm/envs.py VLLM_FUSED_MOE_CHUNK_SIZE; "
            "vllm/model_executor/layers/fused_moe/fused_moe.py fused_experts_impl; "
            "docs/assumption-evidence.md",
            minimum=1.0, maximum=1048576.0,
        ),
        Assumption(
            "non_torch_gib_per_gpu", "Non-torch memory per GPU (CUDA, cuBLAS workspaces)",
            "GiB", "auto",
            "'auto' takes the engine table's figure: vLLM V1 logs 0.13-0.26 GiB of non-torch "
            "memory during the forward pass at TP 1 (0.25); TensorRT-LLM 2.55 GiB after "
            "loading on an H200 (2.5: its runtime, cuBLAS and NCCL workspaces outside torch)",
            "llm-d-planner accuracy logs (PR #205); faradawn/bench3 trtllm-serve log",
            minimum=0.0, maximum=64.0, auto=True,
        ),
        Assumption(
            "comm_buffer_gib_per_gpu", "Communication buffers per GPU at TP ≥ 2", "GiB", 1.85,
            "NCCL and custom all-reduce buffers: non-torch memory rises from 0.25 to 2.07-2.13 "
            "GiB at TP 2-4 on H100 NVLink; over PCIe (no custom all-reduce) about 0.1 GiB, "
            "so GPUs without scale_up_gb_s use a tenth",
            "llm-d-planner accuracy logs (PR #205); gnosia93/vlm-distillation L40S log",
            minimum=0.0, maximum=64.0,
        ),
        Assumption(
            "vision_profile_bytes_per_param", "Vision-encoder profile peak per tower parameter",
            "bytes", 2.4,
            "the profile run encodes dummy images at the multimodal budget, so its peak grows "
            "with the encoder: InternVL3-78B's 5.7B-parameter InternViT showed about 14 GiB "
            "above a text model's peak per GPU (2.4 bytes per tower parameter); Gemma 3's "
            "0.4B SigLIP about 0.2-1 GiB",
            "gnosia93/vlm-distillation ec2/5-vlm-infer.md; llm-d-planner PR #205 Gemma 3 log",
            minimum=0.0, maximum=64.0,
        ),
        Assumption(
            "cuda_graph_gib_per_gpu", "CUDA graphs per GPU", "GiB", 1.0,
            "vLLM V1 captures CUDA graphs after sizing the KV pool: 0.4-1.8 GiB per GPU in "
            "logs; reported as headroom beyond gpu_memory_utilization unless "
            "cuda_graphs_in_budget is 1, when it is deducted before the KV pool",
            "llm-d-planner accuracy logs (PR #205); vLLM docs on memory profiling",
            minimum=0.0, maximum=64.0,
        ),
        Assumption(
            "cuda_graphs_in_budget", "CUDA graphs reserved before the KV pool (1) or not (0)",
            "0/1", 0.0,
            "vLLM 0.21 and later estimate the CUDA-graph memory and deduct it from the KV "
            "budget (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, 'default since v0.21.0' in "
            "their logs; 0.2-2 GiB per GPU); vLLM up to 0.20 and the logs the planner is "
            "checked against capture them afterwards. planner calibrate sets it from the log",
            "vLLM startup logs ('CUDA graph memory profiling is enabled (default since "
            "v0.21.0)'); vllm-project/vllm#30515",
            minimum=0.0, maximum=1.0,
        ),
        Assumption(
            "state_bytes_per_element", "Bytes per element of a linear-attention state",
            "bytes", 4.0,
            "FP32 recurrent state: SGLang's default for Qwen3-Next and the accuracy-safe "
            "setting (vLLM PR #34489); vLLM's 'auto' keeps BF16 (use 2 to match it)",
            "vllm-project/vllm #34489, #39032; sglang docs qwen3.md; "
            "docs/assumption-evidence.md",
            minimum=0.5, maximum=8.0,
        ),
        # -- speed ------------------------------------------------------------------------
        Assumption(
            "bandwidth_efficiency", "Achieved fraction of peak HBM bandwidth in decode",
            "fraction", "auto",
            "'auto' takes the GPU family's measured figure from the GPU catalog, else "
            "bandwidth_efficiency_fallback; a number applies to every GPU",
            "catalogs/gpus.yaml; docs/gpu-evidence.md", minimum=0.01, maximum=1.0, auto=True,
            group="speed",
        ),
        Assumption(
            "bandwidth_efficiency_fallback", "Bandwidth efficiency where the catalog has none",
            "fraction", 0.8,
            "STREAM-style triad reaches 0.89 of spec on H100 and H200, 0.83 on A100; real "
            "decode reaches 0.69-0.82 (gpt-fast); 0.8 is 0.9 × the H100 ceiling",
            "AI-benchmarking-guide Azure results; gpt-fast README; docs/assumption-evidence.md",
            minimum=0.01, maximum=1.0, group="speed",
        ),
        Assumption(
            "compute_efficiency", "Achieved fraction of dense peak FLOP/s", "fraction", "auto",
            "'auto' takes the GPU family's measured figure from the GPU catalog, else "
            "compute_efficiency_fallback; a number applies to every GPU",
            "catalogs/gpus.yaml; docs/gpu-evidence.md", minimum=0.01, maximum=1.0, auto=True,
            group="speed",
        ),
        Assumption(
            "compute_efficiency_fallback", "Compute efficiency where the catalog has none",
            "fraction", 0.5,
            "H100 training MFU is 0.38-0.48 (Megatron-LM, Llama 3) and the dense GEMM ceiling "
            "0.70-0.83; forward-only prefill falls between",
            "NVIDIA/Megatron-LM README; Azure GEMM results; docs/assumption-evidence.md",
            minimum=0.01, maximum=1.0, group="speed",
        ),
        Assumption(
            "kernel_floor_us", "Fixed time per kernel of every engine step", "µs", 5.0,
            "a decode step runs a fixed chain of kernels per layer (norms, projections, rotary, "
            "attention, routing), each taking a few µs beyond the bytes it moves even inside a "
            "CUDA graph; the step pays kernels_per_step × this. Dense layers are 10 kernels: "
            "Qwen3-8B and Llama 3 8B at TP 1 and Llama 3.3 70B at TP 2 decode 33-62 µs a layer "
            "beyond their weight and KV reads (median about 50), so 5 µs a kernel",
            "gpustack qwen3-8b/h100 latency runs; faradawn/bench3 H200; NVIDIA NIM 70B sweep; "
            "docs/engines.md",
            minimum=0.0, maximum=10000.0, group="speed",
        ),
        *(Assumption(name, label, "kernels", count, reason, "docs/engines.md", minimum=0,
                     maximum=1000, group="speed")
          for name, label, count, reason in KERNEL_COUNTS),
        Assumption(
            "eager_kernel_us", "Host launch time per kernel of a pass without a CUDA graph",
            "µs", 41.0,
            "a forward pass that is not replayed from a CUDA graph launches each kernel from "
            "Python, and the GPU waits on the host between them: SGLang's DeepSeek-V3 extend "
            "pass of one new token took 82.6 ms eager and 23.1 ms replayed from a prefill CUDA "
            "graph, the same GPU work: 59.5 ms of launches for the 1,440 kernels "
            "kernels_per_step counts for DeepSeek-V3, 41 µs a kernel; paid by each pass where "
            "eager_prefill is 1, on top of the pass's GPU time",
            "sgl-project/sglang PR #12160 (2025-10-26, 'forward cost' log lines); "
            "docs/engines.md",
            minimum=0.0, maximum=10000.0, group="speed",
        ),
        Assumption(
            "eager_decode", "Every step launched eagerly, without CUDA graphs", "1/0", 0,
            "1: the engine captures no CUDA graph, so every decode step and prefill pass "
            "launches its kernels from the host and pays eager_kernel_us a kernel on top of "
            "the GPU work (vLLM --enforce-eager, SGLang --disable-cuda-graph, TensorRT-LLM's "
            "PyTorch backend of early 2025 unless use_cuda_graph was set: its PyTorchConfig "
            "had use_cuda_graph = False and trtllm-serve did not set it); 0: decode steps replay "
            "CUDA graphs, every engine's default today",
            "NVIDIA/TensorRT-LLM tensorrt_llm/_torch/pyexecutor/config.py @ 9b931c0f "
            "(2025-02); vLLM and SGLang server arguments; docs/engines.md",
            minimum=0, maximum=1, group="speed",
        ),
        Assumption(
            "eager_prefill", "Prefill passes launched eagerly, without a CUDA graph", "1/0",
            "auto",
            "1: every prefill pass launches its kernels from the host (SGLang through 0.5.8, "
            "and on ROCm, with DP attention or as a disaggregated prefill server in any "
            "version); 0: prefill passes replay CUDA graphs or ride in graph-captured or "
            "compiled mixed steps; 'auto' takes the engine table's figure (1 for SGLang, 0 "
            "for vLLM V1 and TensorRT-LLM, whose prompt chunks ride in decode steps). Set 0 "
            "for SGLang with piecewise prefill graphs (the default on NVIDIA GPUs since PR "
            "#16331)",
            "SGLang docs/advanced_features/piecewise_cuda_graph.md; sgl-project/sglang PR "
            "#10062, #16331; docs/engines.md",
            minimum=0, maximum=1, auto=True, group="speed",
        ),
        Assumption(
            "step_overhead_us_per_sequence", "Engine time per running sequence per step", "µs",
            "auto",
            "scheduling, sampling, detokenising and paged-attention bookkeeping cost each running "
            "sequence time every step, so throughput saturates at large batches: vLLM's v0.6 "
            "performance notes put CPU overhead at several ms per step at batches of hundreds "
            "(about 20 µs a sequence); 'auto' takes the engine table's figure (20 µs for vLLM, "
            "SGLang and TensorRT-LLM, whose published max-load runs saturate alike; 0 for "
            "engine=none)",
            "vLLM blog 'vLLM v0.6.0: 2.7x throughput improvement' (2024-09); docs/accuracy.md",
            minimum=0.0, maximum=10000.0, auto=True, group="speed",
        ),
        Assumption(
            "allreduce_latency_us_fallback", "All-reduce latency where the catalog has none",
            "µs", 20.0,
            "small-message NCCL all-reduce across 8 GPUs takes 10-40 µs; used for GPUs without "
            "allreduce_latency_us",
            "nccl-tests results; docs/gpu-evidence.md", minimum=0.0, maximum=10000.0,
            group="speed",
        ),
        Assumption(
            "expert_load_imbalance", "Busiest expert-parallel rank ÷ mean rank", "ratio", 1.2,
            "under expert parallelism every MoE layer waits for the rank whose experts drew the "
            "most tokens; routers never balance a live batch exactly (DeepSeek's EPLB duplicates "
            "hot experts because of it, and SGLang's LPLB still gains up to 7% throughput on top "
            "of EPLB by trimming the busiest rank); 1.2 is a judgement for EP within one server "
            "with EPLB on, applied to the routed experts' compute and the all-to-all",
            "deepseek-ai/EPLB README; SGLang Waterfill/LPLB blog (2026); "
            "docs/assumption-evidence.md §7 [?]", minimum=1.0, maximum=10.0, group="speed",
        ),
        Assumption(
            "rdma_gb_s_fallback", "RDMA bandwidth per GPU where the server has none", "GB/s",
            50.0,
            "HGX/DGX H100, H200 and B200 servers pair each GPU with a 400 Gb/s ConnectX-7 NIC "
            "(50 GB/s); DeepEP measures CX7 400 Gb/s at about 50 GB/s; used for the KV "
            "transfer of disaggregated serving where the server gives no rdma_gb_s",
            "latency-facts §4 [L29]; NVIDIA DGX H100/B200 user guides", minimum=0.1,
            maximum=10000.0, group="speed",
        ),
        Assumption(
            "kv_transfer_efficiency", "Achieved share of RDMA bandwidth moving KV", "fraction",
            0.87,
            "Mooncake's transfer engine moves 40 GB of KV at 87 GB/s over 4 × 200 Gb/s RoCE "
            "(100 GB/s line rate): 0.87; vLLM's NIXL connector measured far less (4.3 GB/s "
            "aggregate) before its fixes, so a slow stack is a --set away",
            "latency-facts §5 [L43] [L44]", minimum=0.01, maximum=1.0, group="speed",
        ),
        Assumption(
            "pcie_gb_s", "Effective all-reduce bandwidth over PCIe", "GB/s", 25.0,
            "PCIe Gen4/Gen5 x16 carries 32/64 GB/s per direction; ring all-reduce over host "
            "bridges reaches about 25 GB/s; used for GPUs without scale_up_gb_s",
            "PCI-SIG specifications; nccl-tests busbw on PCIe servers", minimum=0.1,
            maximum=10000.0, group="speed",
        ),
        # -- site ---------------------------------------------------------------------------
        Assumption(
            "target_utilisation", "Peak load per replica as a share of its capacity", "fraction",
            0.8,
            "headroom for bursts and latency tails: llm-d planner sizes with 20 % headroom, "
            "fleet-sim caps utilisation at 0.85",
            "llm-d planner sizes replicas from QPS with 20 % headroom; vLLM semantic-router "
            "fleet-sim caps utilisation at 0.85 (docs/tco-evidence.md §11)", minimum=0.05,
            maximum=1.0, group="site",
        ),
        Assumption(
            "pue", "Power usage effectiveness (facility ÷ IT power)", "ratio", 1.25,
            "Epoch's default for non-hyperscale sites; enterprise colocation 1.5-1.6, new AI "
            "builds under 1.3, hyperscalers 1.1",
            "Uptime Institute surveys (industry average 1.55-1.58, 2021-23); Google 1.10, Meta "
            "1.09; Epoch AI's cost model uses 1.25 outside hyperscalers (docs/tco-evidence.md "
            "§1)", minimum=1.0, maximum=3.0,
            group="site",
        ),
        Assumption(
            "electricity_usd_per_kwh", "Electricity price", "USD/kWh", 0.0826,
            "US industrial average price, 2025 (EIA via Epoch)",
            "US Energy Information Administration: average industrial price 8.26 ¢/kWh in "
            "2025 (7.71 in 2024), as tabled in Epoch AI's hardware cost model "
            "(docs/tco-evidence.md §2)",
            minimum=0.0, maximum=2.0, group="site",
        ),
        Assumption(
            "average_power_share", "Average draw ÷ maximum server power", "fraction", 0.75,
            "Epoch assumes GPU servers average 75 % of their rated maximum",
            "Epoch AI's hardware cost model: average draw 75 % of server TDP for GPUs; a DGX "
            "H100 typically draws 6.5-8.5 of its 10.2 kW (docs/tco-evidence.md §3)",
            minimum=0.05, maximum=1.0, group="site",
        ),
        Assumption(
            "rack_power_kw", "Power one rack can feed and cool", "kW", 40.8,
            "four DGX H100 (10.2 kW each) per 40.8 kW rack in NVIDIA's SuperPOD design; most "
            "enterprise sites have no rack above 30 kW",
            "NVIDIA DGX SuperPOD H100 data-center design guide: 4 systems of 10.2 kW per "
            "40.8 kW rack; Uptime Institute 2024: most sites have no rack above 30 kW "
            "(docs/tco-evidence.md §4)", minimum=1.0, maximum=500.0, group="site",
        ),
        Assumption(
            "rack_units_per_rack", "Usable rack units per rack", "U", 42.0,
            "a standard 42U rack",
            "a standard full-height 19-inch rack has 42U; MGX/NVL72 racks are 48U "
            "(docs/tco-evidence.md §5)", minimum=1.0, maximum=60.0,
            group="site",
        ),
        Assumption(
            "colocation_usd_per_kw_month", "Colocation price per kW of IT capacity", "USD/kW-month",
            184.06,
            "North America primary markets, 250-500 kW requirements, H2 2024 (CBRE); power "
            "billed separately",
            "CBRE North America Data Center Trends, H2 2024: $184.06 per kW per month for "
            "250-500 kW in primary markets, +12.6 % year on year (docs/tco-evidence.md §6)",
            minimum=0.0, maximum=2000.0,
            group="site",
        ),
        # -- finance ------------------------------------------------------------------------
        Assumption(
            "amortisation_years", "Amortisation period", "years", 5.0,
            "Amazon moved a subset of servers back to 5 years in 2025 citing the AI pace; "
            "Meta 5.5, Microsoft and Alphabet 6",
            "hyperscalers' annual reports: Amazon 5 years from 2025 for a subset of servers, "
            "Meta 5.5, Microsoft and Alphabet 6; Epoch AI uses 5 years from 2023 "
            "(docs/tco-evidence.md §7)", minimum=1.0,
            maximum=15.0, group="finance",
        ),
        Assumption(
            "discount_rate", "Discount rate for opex", "fraction per year", 0.08,
            "a typical corporate cost of capital; the after-tax cost of debt is the textbook "
            "rate for lease-versus-buy",
            "Damodaran, US cost of capital by industry, January 2026: 5.0-9.4 % (after-tax "
            "cost of debt 3.6-4.0 %); lease-versus-buy textbooks (docs/tco-evidence.md §8)",
            minimum=0.0, maximum=1.0,
            group="finance",
        ),
        Assumption(
            "redundancy", "Servers a workload may lose and still carry its peak", "none|n+1",
            "n+1",
            "n+1: the fleet carries each workload's peak rate with any one server down, so "
            "spares sit in another server and a workload that needs one server buys a second; "
            "none: spares may share the replicas' server (one failure can take it down)",
            "Meta's Llama 3 training run on 16,384 H100: 1.4 unexpected interruptions per "
            "8-GPU server-year; with a 3-day repair a server is down about 1.1 % of the time, "
            "so two down at once is rare up to about 16 servers (docs/tco-evidence.md; "
            "reference/procurement-facts.md §5)",
            choices=("none", "n+1"), group="site",
        ),
        Assumption(
            "horizon_quarters", "Quarters the purchase schedule covers", "quarters", 8.0,
            "two years: a rack-scale system's lead time (up to four quarters) and a year of "
            "service after it; demand further out is a guess",
            "A finance budget cycle of two years: long enough to cover the longest server lead "
            "time and a year of service after delivery (docs/tco-evidence.md)",
            minimum=1.0, maximum=40.0, group="finance",
        ),
        Assumption(
            "lead_time_weeks", "Weeks from order to delivery, for a server that gives none",
            "weeks", 12.0,
            "8-12 weeks for a mature generation bought through an OEM (Dell H100, 2024); "
            "new-generation HGX 16-40 weeks, rack-scale NVL72 26-52 (procurement-facts 2)",
            "OEM and distributor quotes: 8-12 weeks for a mature GPU generation, 16-40 for a new "
            "HGX generation, 26-52 for rack-scale systems (docs/tco-evidence.md)",
            minimum=0.0, maximum=104.0, group="site",
        ),
        Assumption(
            "reserved_discount", "Discount of reserved cloud capacity off on-demand", "fraction",
            0.41,
            "AWS 1-year commitment 41 % (3-year 64 %), Epoch's defaults",
            "Epoch AI's committed-use defaults: AWS 41 % (1 year) and 64 % (3 years) off "
            "on-demand, GCP 37/56 %, Azure 25/49 % (docs/tco-evidence.md §12)", minimum=0.0,
            maximum=0.95, group="finance",
        ),
    ]
}
