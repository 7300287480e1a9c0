"""The standard normal distribution and e^x in the four operations a spreadsheet formula
shares with every engine (Abramowitz & Stegun's rational approximations; e^x as a power of e),
each as fleet quantities with short formulas: a tail variable, then the value."""

from __future__ import annotations

from planner.model.expr import IF, LN, MAX, MIN, Expr
from planner.model.fleet_refs import sqrt as _sqrt
from planner.model.quantity import Quantity, q

_E = 2.718281828459045  # e: e^x is written as a power, so no function beyond arithmetic


def normal_quantile(name: str, label: str, level: Expr, of: str) -> list[Quantity]:
    """z with P(Z ≤ z) = level for a standard normal Z, as two quantities (short formulas):
    t = √(−2 ln tail) of the smaller tail (held above 10^-9), then Abramowitz & Stegun 26.2.23
    (Hastings), |error| < 4.5e-4, the sign of the side the level is on."""
    t = q(f"{name}_t")
    return [
        Quantity(f"{name}_t", f"{label}: tail variable", "ratio",
                 _sqrt(-2 * LN(MAX(1e-9, MIN(level, 1 - level)))),
                 f"t = √(−2 ln tail), the tail the smaller of {of} and 1 − it"),
        Quantity(name, label, "standard deviations",
                 IF(level >= 0.5, 1, -1) * (t - (2.515517 + 0.802853 * t + 0.010328 * t * t)
                                            / (1 + 1.432788 * t + 0.189269 * t * t
                                               + 0.001308 * t * t * t)),
                 f"the standard normal quantile of {of}: ±(t − (2.515517 + 0.802853 t + "
                 "0.010328 t²) / (1 + 1.432788 t + 0.189269 t² + 0.001308 t³)) (Abramowitz & "
                 "Stegun 26.2.23, |error| < 4.5 × 10^-4)"),
    ]


def normal_tail(name: str, label: str, z: Expr, of: str) -> list[Quantity]:
    """P(Z > z) for a standard normal Z as two quantities: Abramowitz & Stegun 26.2.17
    (|error| < 7.5e-8) on |z| held within 30 (the tail is then 0 or 1 to 10^-197)."""
    t = q(f"{name}_t")
    x = MIN(30, MAX(z, -z))
    upper = exp(-x * x / 2) * 0.3989422804014327 * t * (
        0.319381530 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978
                                                                  + t * 1.330274429))))
    return [
        Quantity(f"{name}_t", f"{label}: tail variable", "ratio", 1 / (1 + 0.2316419 * x),
                 f"t = 1 / (1 + 0.2316419 |{of}|), |{of}| at most 30"),
        Quantity(name, label, "fraction", IF(z >= 0, 0, 1) + IF(z >= 0, 1, -1) * upper,
                 f"the standard normal tail beyond {of}: φ(x) t (0.319381530 + t (−0.356563782 "
                 "+ t (1.781477937 + t (−1.821255978 + 1.330274429 t)))) at x = |z| "
                 "(Abramowitz & Stegun 26.2.17), 1 − that below 0", display="ratio"),
    ]


def exp(x: Expr) -> Expr:
    """e^x for x ≤ 0, held above −700 (spreadsheets give #NUM! where a power underflows)."""
    return _E ** MAX(-700, x)
