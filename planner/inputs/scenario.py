"""One configuration as the user asks for it (model, GPU, formats, TP, context, batch, prompt,
output) and the checks that say what is wrong with it before anything is computed."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, fields

from planner.errors import ArgumentError, LocatedError
from planner.inputs.entries import Catalog, Entry, Gpu, Model
from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS


@dataclass(frozen=True)
class Scenario:
    """One configuration: which model on which GPU, in which formats, at what load."""

    model: str
    gpu: str
    weights: str = "bf16"
    kv: str = "bf16"
    tp: int = 1
    context: int = 8192
    batch: int = 1
    prompt: int = 2048
    output: int = 0  # output tokens per request; 0: not given (decode at the full context)


SCENARIO_FIELDS = tuple(f.name for f in fields(Scenario))


def unknown(what: str, value: str, known: list[str], option: str) -> ArgumentError:
    close = [k for k in known if value and k.startswith(value)] or difflib.get_close_matches(
        value, known, n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'?" if close else f"known: {', '.join(known)}"
    return ArgumentError(f"{option} {value}: unknown {what}; {hint}")


def check_scenario(s: Scenario, models: Catalog, gpus: Catalog) -> tuple[Model, Gpu]:
    """Say what is wrong with a configuration before computing anything."""
    if s.model not in models.entries:
        raise unknown("model", s.model, sorted(models.entries), "--model")
    if s.gpu not in gpus.entries:
        raise unknown("GPU", s.gpu, sorted(gpus.entries), "--gpu")
    if s.weights not in WEIGHT_FORMATS:
        raise unknown("weight format", s.weights, list(WEIGHT_FORMATS), "--weights")
    if s.kv not in KV_FORMATS:
        raise unknown("KV-cache format", s.kv, list(KV_FORMATS), "--kv")
    for name, option in (("tp", "--tp"), ("context", "--context"), ("batch", "--batch"),
                         ("prompt", "--prompt"), ("output", "--output")):
        value = getattr(s, name)
        floor = 0 if name == "output" else 1
        if not isinstance(value, int) or isinstance(value, bool) or value < floor:
            word = "0 or more" if floor == 0 else "greater than 0"
            raise ArgumentError(f"{option} {value}: must be a whole number {word}")
    model = models.entries[s.model]
    assert isinstance(model, Model)
    gpu = gpus.entries[s.gpu]
    assert isinstance(gpu, Gpu)
    problem = tp_problem(model, s.tp)
    if problem:
        raise ArgumentError(f"--tp {s.tp}: {problem}")
    limit = int(model.number("max_position_embeddings"))
    if s.output > 0 and limit and s.prompt + s.output > limit:
        raise LocatedError(model.locate("max_position_embeddings"),
                           f"--prompt {s.prompt:,} + --output {s.output:,} = "
                           f"{s.prompt + s.output:,} tokens is beyond {s.model}'s context limit "
                           f"of {limit:,} tokens (max_position_embeddings)",
                           "shorten the prompt or the output; a request longer than the "
                           "model's context cannot be served")
    return model, gpu


def tp_problem(model: Entry, tp: int) -> str | None:
    """Why `tp` cannot shard `model`, or None. Engines require TP to divide the query heads
    and the KV heads to divide evenly (or be replicated) across ranks."""
    heads = int(model.number("num_attention_heads"))
    if heads % tp:
        divisors = [d for d in (1, 2, 4, 8, 16, 32, 64) if heads % d == 0]
        return (f"{model.id} has {heads} attention heads, which {tp} ranks cannot split "
                f"evenly; use one of {', '.join(map(str, divisors))}")
    kv = int(model.number("num_key_value_heads")) or heads
    if not model.number("kv_lora_rank") and kv % tp and tp % kv:
        return (f"{model.id} has {kv} KV heads, which neither divide evenly over {tp} ranks "
                "nor replicate evenly")
    return None


def check_request_within_context(s: Scenario, prompt_given: bool) -> None:
    """Refuse a request longer than the context it is sized for: --prompt + --output above
    --context (when an output or a prompt was given), since the KV cache holds `context`
    tokens per sequence and the request would not fit it."""
    if s.output > 0 and s.prompt + s.output > s.context:
        raise ArgumentError(f"--prompt {s.prompt:,} + --output {s.output:,} = "
                            f"{s.prompt + s.output:,} tokens is beyond --context {s.context:,}: "
                            "each sequence's KV cache holds --context tokens, so the request "
                            f"would not fit; give --context {s.prompt + s.output} or more (or "
                            "leave it out: it defaults to prompt + output), or shorten the "
                            "prompt or output")
    if prompt_given and s.prompt > s.context:
        raise ArgumentError(f"--prompt {s.prompt:,} is beyond --context {s.context:,}: the "
                            f"prompt would not fit the KV cache; give --context {s.prompt} or "
                            "more, or a shorter prompt")

