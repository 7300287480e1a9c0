"""How sure the page is of each workload's plan: met, at risk or cannot be met, the percentile
its targets hold at, and the margin behind every tick (the measured speed error applied, and the
replicas needed at the pessimistic end of its spread: :func:`planner.plan.sizing.spread`). The
decision screen and the workload cards word it alike."""

from __future__ import annotations

from dataclasses import dataclass

from planner.plan.sizing import FleetEnv, Sized, spread

MET, RISK, UNMET = "met", "risk", "unmet"


@dataclass(frozen=True)
class Assessment:
    state: str  # MET, RISK or UNMET
    percentile: str  # "p95"
    margin: str  # what stands behind a tick, beginning "margin"
    ratio: str  # "×1.12", or "" when no margin is applied
    pessimistic: str  # "×1.23", or ""
    planned: int  # serving replicas planned
    needed: int  # serving replicas at the pessimistic end
    reason: str  # why it cannot be met ("" when it can)

    @property
    def mark(self) -> str:
        return {MET: "✓", RISK: "⚠", UNMET: "✗"}[self.state]

    @property
    def short(self) -> str:
        """The state in a table cell: "✓ p95 met, margin ×1.12"."""
        if self.state == UNMET:
            return "✗ cannot be met"
        margin = f"margin {self.ratio}" if self.ratio else "margin none measured"
        if self.state == RISK:
            return (f"⚠ at risk: {self.percentile} met with {margin}, but {self.needed} "
                    f"replicas needed at {self.pessimistic} ({self.planned} planned)")
        return f"✓ {self.percentile} met, {margin}"

    @property
    def tick(self) -> str:
        """The mark of a target that is met, with its margin beside it."""
        margin = f"margin {self.ratio}" if self.ratio else "margin none measured"
        if self.state == RISK:
            return f"⚠ met with {margin}; at risk at {self.pessimistic}"
        return f"✓ met, {margin}"


def percentile_label(env: FleetEnv) -> str:
    return f"p{env.number('latency_percentile_used') * 100:g}"


def margin_text(env: FleetEnv) -> str:
    if env.assumptions["speed_basis"] == "model":
        return "margin none (speed_basis=model: the model's own speed)"
    if not env.speed.runs:
        return ("margin none measured (no published run on this GPU to measure it by)"
                + _first_token(env))
    return (f"margin ×{env.number('speed_ratio_applied'):.2f} (the measured speed error, "
            f"{env.speed.runs} published runs)" + _first_token(env))


def _first_token(env: FleetEnv) -> str:
    """', first token ×1.34 more (…)' where the measured first-token error adds a margin."""
    ratio = env.number("ttft_margin_ratio")
    if not ratio > 1:
        return ""
    return (f", first token ×{ratio:.2f} more (the measured first-token error, "
            f"{env.ttft.runs} published runs)")


def assess(sized: Sized) -> Assessment:
    env = sized.choice
    assert env is not None
    planned = int(env.number("layout_serving_replicas"))
    if not sized.met:
        return Assessment(UNMET, percentile_label(env), margin_text(env), "", "", planned,
                          planned, sized.cannot_meet or "")
    ends = spread(env)
    measured = env.assumptions["speed_basis"] != "model" and env.speed.runs > 0
    return Assessment(RISK if ends.at_risk else MET, percentile_label(env), margin_text(env),
                      f"×{env.number('speed_ratio_applied'):.2f}" if measured else "",
                      f"×{env.speed.q3:.2f}" if measured else "", planned, ends.pessimistic, "")
