"""The M/D/1 queue (Poisson arrivals, a fixed service time τ, one server) at a latency
percentile p: a prompt's tail wait and mean wait, and the largest load whose tail wait stays
within a budget, found with ln replaced by a tangent (docs/latency.md §6). The aggregated
prefill queue (``planner.model.latency``) and the disaggregated prefill pool
(``planner.model.layouts``) both read these."""

from __future__ import annotations

from planner.model.expr import IF, LN, MAX, MIN, Expr, Num
from planner.model.quantity import q


def md1_tail_wait(load: Expr, service: Expr) -> Expr:
    """The M/D/1 exponential tail wait at the latency percentile p, ln(ρ/(1 − p)) τ / (2(1 − ρ)),
    0 when ρ ≤ 1 − p (no prompt waits at the percentile); for ρ < 1."""
    p = q("latency_percentile_used")
    return IF(load > 1 - p, LN(load / (1 - p)) * service / (2 * (1 - load)), 0)


def md1_mean_wait(load: Expr, service: Expr) -> Expr:
    """The M/D/1 mean wait ρτ / (2(1 − ρ)); 1e9, no steady state, for ρ ≥ 1."""
    return IF(load < 1, load * service / (2 * (1 - load)), 1e9)


def tangent_at(before: Expr | None) -> tuple[Expr, Expr]:
    """ln(ρ/(1 − p)) replaced by its tangent at x0 = max(1, `before`/(1 − p)), ln x0 − 1 + ρ/ρ0:
    (lead, ρ0) = (ln x0 − 1, (1 − p) x0). ln is concave, so the tangent lies above it and a load
    found with it is never overstated; with no pass `before`, x0 = 1: ln x ≤ x − 1, (−1, 1 − p)."""
    q_ = 1 - q("latency_percentile_used")
    if before is None:
        return Num(-1), q_
    x0 = MAX(1, before / q_)
    return LN(x0) - 1, q_ * x0


def md1_load_limit(budget: Expr, tau: Expr, before: Expr | None = None) -> Expr:
    """The load ρ whose M/D/1 tail wait ln(ρ/(1 − p)) τ / (2(1 − ρ)) stays within the budget b,
    ln replaced by its tangent (`tangent_at`): ρ ≤ (2b − τ lead) / (τ/ρ0 + 2b); at most 0.99, 0
    when the budget is negative. A disaggregated prefill pool's limit, where no prompt rides
    along (docs/latency.md §6)."""
    lead, rho0 = tangent_at(before)
    return IF(budget > 0, MIN(0.99, (2 * budget - tau * lead) / (tau / rho0 + 2 * budget)), 0)
