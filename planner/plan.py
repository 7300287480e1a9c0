"""A plan: the catalogs, assumptions and grid of one build, with every row evaluated.

The workbook and the HTML summary both render a Plan, so they show the same Python values.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from planner import __version__
from planner.assumptions import resolve
from planner.calc import EvaluatedRow, ModelEnv, RowEnv, Scenario, check_scenario
from planner.catalog import (
    DEFAULT_GPUS,
    DEFAULT_MODELS,
    DEFAULT_SERVERS,
    DEFAULT_WORKLOADS,
    Catalog,
    load_gpus,
    load_models,
    load_servers,
    load_workloads,
)
from planner.errors import GridTooLargeError
from planner.grid import EXCEL_MAX_ROWS, Grid, View, count_valid, expand, grid_for
from planner.sensitivity import Swing, sensitivity
from planner.sizing import Sized, size_all

Progress = Callable[[str, int, int], None]


@dataclass
class Plan:
    models: Catalog
    gpus: Catalog
    grid: Grid
    assumptions: dict[str, float | str]
    overrides: dict[str, float | str]
    rows: list[EvaluatedRow]
    generated: str = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc)
                           .strftime("%Y-%m-%d %H:%M UTC"))
    version: str = __version__
    model_envs: dict[str, ModelEnv] = field(default_factory=dict)
    workloads: Catalog = field(default_factory=lambda: Catalog(Path("-"), "", {}))
    servers: Catalog = field(default_factory=lambda: Catalog(Path("-"), "", {}))
    sized: list[Sized] = field(default_factory=list)
    swings: list[Swing] = field(default_factory=list)

    @property
    def view(self) -> View:
        return self.grid.view

    def row_env(self, scenario: Scenario) -> RowEnv:
        """Evaluate any configuration under this plan's assumptions (views, charts)."""
        model, gpu = check_scenario(scenario, self.models, self.gpus)
        if model.id not in self.model_envs:
            self.model_envs[model.id] = ModelEnv(model, self.assumptions)
        return RowEnv(scenario, self.model_envs[model.id], gpu, self.assumptions)


def build_plan(models_path: Path | str, gpus_path: Path | str, grid_path: Path | str,
               overrides: Mapping[str, float | str] | None = None,
               progress: Progress | None = None, header_rows: int = 1,
               workloads_path: Path | str = DEFAULT_WORKLOADS,
               servers_path: Path | str = DEFAULT_SERVERS) -> Plan:
    from planner.overrides import apply

    extra = overrides or {}
    models = apply(load_models(models_path), "models", extra)
    gpus = apply(load_gpus(gpus_path), "gpus", extra)
    shipped = Path(servers_path) == DEFAULT_SERVERS and Path(workloads_path) == DEFAULT_WORKLOADS
    servers = apply(load_servers(servers_path, gpus, strict=not shipped), "servers", extra)
    workloads = apply(load_workloads(workloads_path, models, gpus, strict=not shipped),
                      "workloads", extra)
    own = Path(models_path) != DEFAULT_MODELS or Path(gpus_path) != DEFAULT_GPUS
    grid = grid_for(grid_path, models, gpus, own)
    limit = EXCEL_MAX_ROWS - header_rows
    if grid.size() > limit:
        valid = count_valid(grid, models, gpus)
        if valid > limit:
            raise GridTooLargeError(
                f"{grid.path}: the grid expands to {valid:,} configurations, more than the "
                f"{limit:,} rows an Excel worksheet holds; remove values from an axis "
                f"(axes: {', '.join(f'{k} {len(v)}' for k, v in grid.axes.items())})")
    plan = Plan(models, gpus, grid, resolve(overrides), dict(overrides or {}), [])
    plan.workloads, plan.servers = workloads, servers
    if progress:
        progress("sizing workloads", 0, 1)
    plan.sized = size_all(workloads, models, gpus, servers, overrides) if (
        workloads.entries and servers.entries) else []
    if plan.sized:
        if progress:
            progress("sensitivity", 0, 1)
        plan.swings = sensitivity(plan.sized, models, gpus, servers, workloads,
                                  plan.assumptions)
    total = count_valid(grid, models, gpus)
    for i, scenario in enumerate(expand(grid, models, gpus)):
        plan.rows.append(EvaluatedRow(plan.row_env(scenario)))
        if progress and i % 5000 == 0:
            progress("evaluating", i, total)
    return plan
