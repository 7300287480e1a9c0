"""The leaves a fleet row reads beyond the configuration row: workload, server, cloud offer and
measured speed error fields, and the workload's prompt and output tokens. Shared by the fleet
quantities (``planner.model.fleet``) and their latency block (``planner.model.latency``)."""

from __future__ import annotations

from planner.model.expr import INT, Expr, Ref


def w(name: str) -> Ref:
    return Ref("workload", name)


def srv(name: str) -> Ref:
    return Ref("server", name)


def cloud(name: str) -> Ref:
    """A field of the cheapest cloud offer for the row's GPU (catalogs/clouds.yaml), or
    ``offer_exists`` (1 where the GPU has one)."""
    return Ref("cloud", name)


def measured(name: str) -> Ref:
    """The planner's measured speed error for the row's GPU, engine and model class
    (catalogs/measured-accuracy.yaml): a value the Fleet sheet holds as an input."""
    return Ref("measured", name)


def ceil(x: Expr) -> Expr:
    return -INT(-x)


PROMPT, OUTPUT = w("prompt_tokens"), w("output_tokens")


def sqrt(x: Expr) -> Expr:
    return x ** 0.5

