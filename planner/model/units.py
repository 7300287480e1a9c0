"""Unit conversions, in one place. Inside the planner everything is in base units:
bytes, seconds, FLOPs, tokens, USD. Decimal prefixes for marketed sizes and rates, binary for
what devices report.
"""

from __future__ import annotations

GB = 10**9  # marketed GPU memory, model sizes in reports
GiB = 2**30  # runtime overheads, what engines log
MiB = 2**20  # what nvidia-smi / rocm-smi report
TB_PER_S = 10**12  # bandwidth, decimal
TFLOPS = 10**12  # FLOP/s, decimal
SECONDS_PER_HOUR = 3600
MILLION = 10**6

HOURS_PER_YEAR = 8760
SECONDS_PER_YEAR = 8760 * 3600
