"""Read a serving engine's startup log: what vLLM, SGLang or TensorRT-LLM reserved, per GPU.

``parse.parse_log`` / ``parse.parse_text`` recognise the engine from the text and pick its
figures from the lines it prints while starting (see shared/calibration/engine-points.md for what
each one means); each engine's lines are in ``vllm``, ``sglang`` and ``trtllm``, built from
``rules``. The parser is pure: it reads text and returns a ``report.EngineReport``; it never
guesses a figure the log does not print, except where a line only makes sense combined with
another (SGLang's K + V sizes; vLLM 0.6.4's ``peak_torch_memory``, which includes the weights).

Tolerated: log prefixes (timestamps, ``(VllmWorker rank=0 pid=..)``, ``(Worker_TP0 pid=..)``,
``[... TP0]``), ANSI colour codes, progress bars written with carriage returns, and lines that a
terminal or a copy-paste hard-wrapped (a phrase that breaks off at the end of a line is joined
with the next lines). When several tensor-parallel workers print the same line, rank 0 wins,
then a line with no worker prefix (the driver), then the first one.

Sizes are GiB (2^30 bytes). vLLM's and SGLang's "GB" are also 2^30, so they are read as GiB.
"""
