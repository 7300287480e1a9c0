"""The server settings an InferenceX launch script gives one run, read without running it.

The scripts choose their flags in shell branches on the run's parameters (`if [[ $TP -eq 4 ]]`,
`elif [[ "$ISL" == "8192" && "$OSL" == "1024" ]]`, `if [[ $CONC -ge 64 ]]`) and pass them as
variables (`--mem-fraction-static $MEM_FRAC_STATIC`, `free_gpu_memory_fraction:
$KV_CACHE_FREE_MEM_FRACTION`). This follows the branches for the run's TP, concurrency,
lengths, expert-parallel size and DP attention, keeps the assignments and flags of the lines
that would run, and resolves the flags' variables. A condition on anything else (the job
scheduler, an evaluation-only mode) counts as false, as it is for a benchmark run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_TEST = re.compile(r"\[\[\s*(.*?)\s*\]\]")
_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Z_][A-Z0-9_]*)=(\S*)")
_KV_BLOCK_DTYPE = re.compile(r"^dtype:\s*(\$\{?\w+\}?|[a-z0-9_]+)")  # kv_cache_config: dtype
_FLAGS = {
    "kv": re.compile(r"--kv-cache-dtype[ =]+(\$\{?\w+\}?|[a-z0-9_]+)"),
    "fraction": re.compile(r"(?:--mem-fraction-static[ =]+|free_gpu_memory_fraction:\s*)"
                           r"(\$\{?\w+\}?|[0-9.]+)"),
}


def _value(token: str, env: Mapping[str, str]) -> str:
    token = token.strip("\"'")
    found = re.fullmatch(r"\$\{?(\w+)(?::-([^}]*))?\}?", token)
    if not found:
        return token
    return env.get(found.group(1), found.group(2) or "")


def _compare(left: str, op: str, right: str) -> bool:
    if op in ("==", "=", "!="):
        return (left == right) == (op != "!=")
    try:
        a, b = float(left), float(right)
    except ValueError:
        return False
    return {"-eq": a == b, "-ne": a != b, "-ge": a >= b, "-gt": a > b, "-le": a <= b,
            "-lt": a < b}.get(op, False)


def _test(body: str, env: Mapping[str, str]) -> bool:
    """One `[[ ... ]]` test: comparisons joined by && or ||, -n / -z, on the run's values."""
    def one(clause: str) -> bool:
        words = clause.split()
        if len(words) == 2 and words[0] in ("-n", "-z"):
            return bool(_value(words[1], env)) == (words[0] == "-n")
        if len(words) == 3:
            return _compare(_value(words[0], env), words[1], _value(words[2], env))
        return False
    return any(all(one(c) for c in part.split("&&")) for part in body.split("||"))


def _condition(line: str, env: Mapping[str, str]) -> bool:
    """An if/elif line's condition: its tests joined by || or && outside the brackets."""
    head = line.split(";")[0]
    tests = [_test(t, env) for t in _TEST.findall(head)]
    between = re.sub(r"\[\[.*?\]\]", "", head)
    return any(tests) if "||" in between else all(tests) and bool(tests)


def settings(script: str, env: Mapping[str, str]) -> dict[str, str]:
    """The KV-cache type and memory fraction the script's server gets for the run `env`
    (TP, CONC, ISL, OSL, EP_SIZE, DP_ATTENTION), where it gives them."""
    values = dict(env)
    stack: list[list[bool]] = []  # per open `if`: [parent active, a branch taken, active]
    found: dict[str, str] = {}
    in_kv_block = False  # inside a TensorRT-LLM YAML's kv_cache_config mapping
    for raw in script.splitlines():
        line = raw.split(" #")[0].strip()
        if raw[:1].strip():
            in_kv_block = line.startswith("kv_cache_config:")
        active = all(frame[2] for frame in stack)
        if re.match(r"if\b", line) and not re.search(r";\s*fi\s*$", line):
            taken = active and _condition(line[2:], values)
            stack.append([active, taken, taken])
            continue
        if re.match(r"elif\b", line) and stack:
            frame = stack[-1]
            frame[2] = frame[0] and not frame[1] and _condition(line[4:], values)
            frame[1] = frame[1] or frame[2]
            continue
        if line == "else" and stack:
            stack[-1][2] = stack[-1][0] and not stack[-1][1]
            continue
        if line == "fi" and stack:
            stack.pop()
            continue
        if not active:
            continue
        assigned = _ASSIGN.match(line)
        if assigned:
            values[assigned.group(1)] = _value(assigned.group(2), values)
        for name, pattern in _FLAGS.items():
            flag = pattern.search(line)
            if flag:
                found[name] = _value(flag.group(1), values)
        dtype = _KV_BLOCK_DTYPE.match(line) if in_kv_block else None
        if dtype:
            found["kv"] = _value(dtype.group(1), values)
    return {k: v for k, v in found.items() if v}
