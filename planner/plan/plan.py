"""A plan: the catalogs, assumptions and grid of one build.

The workbook and the HTML summary both render a Plan, so they show the same Python values. The
grid's rows are evaluated block by block whenever they are read (``Plan.rows``), never all
kept: the workbook streams them into its Grid sheet and the first full pass leaves
``Plan.summary``, the aggregates the HTML shows, so memory does not grow with the grid.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from planner import __version__
from planner.errors import GridTooLargeError
from planner.inputs.catalog import (
    DEFAULT_CLOUDS,
    DEFAULT_GPUS,
    DEFAULT_MODELS,
    DEFAULT_SERVERS,
    DEFAULT_WORKLOADS,
    load_clouds,
    load_gpus,
    load_models,
    load_servers,
    load_workloads,
)
from planner.inputs.entries import Catalog
from planner.inputs.grid import EXCEL_MAX_ROWS, Grid, View, count_valid, grid_for, skip_reason
from planner.inputs.scenario import Scenario, check_scenario
from planner.inputs.settings import resolve
from planner.plan.calc import BlockEnv, BlockRow, ModelEnv, RowEnv
from planner.plan.scenarios import DEFAULT_SCENARIOS, NamedScenario, load_scenarios, scenario_totals
from planner.plan.schedule import WorkloadSchedule, plan_schedules
from planner.plan.sensitivity import Swing, sensitivity
from planner.plan.sizing import Sized, check_sizable, size_all
from planner.plan.summary import (
    ANSWER_WEIGHTS,
    GridSummary,
    grid_prompt,
    headline_batch,
    reference_context,
)

Progress = Callable[[str, int, int], None]
BLOCK_ROWS = 1024  # most rows evaluated together (rows of one model, GPU, formats and TP)


def scenario_blocks(grid: Grid, models: Catalog, gpus: Catalog,
                    limit: int = BLOCK_ROWS) -> Iterator[list[Scenario]]:
    """The configurations ``grid.expand`` yields, in its order, in blocks of at most `limit`
    that share model, GPU, formats and TP."""
    a = grid.axes
    for model, gpu, weights, kv, tp in itertools.product(a["models"], a["gpus"], a["weights"],
                                                         a["kv"], a["tp"]):
        if skip_reason(models, gpus, model, gpu, tp):
            continue
        loads = itertools.product(a["context"], a["batch"], a["prompt"], a["output"])
        while chunk := list(itertools.islice(loads, limit)):
            yield [Scenario(model, gpu, weights, kv, tp, c, b, p, o) for c, b, p, o in chunk]


def skipped_rows(grid: Grid, models: Catalog, gpus: Catalog) -> dict[str, int]:
    """What ``grid.expand`` counts as skipped, and why, without expanding."""
    a = grid.axes
    per_triple = 1
    for axis in ("weights", "kv", "context", "batch", "prompt", "output"):
        per_triple *= len(a[axis])
    out = {"TP does not shard the model": 0, "TP exceeds GPUs per node": 0}
    for model, gpu, tp in itertools.product(a["models"], a["gpus"], a["tp"]):
        reason = skip_reason(models, gpus, model, gpu, tp)
        if reason:
            out[reason] += per_triple
    return out


class GridRows:
    """The grid's rows, evaluated block by block each time they are read; ``len`` is their
    count. Iterating gives rows read like ``EvaluatedRow`` (scenario, value(name))."""

    def __init__(self, count: int, plan: Plan | None = None) -> None:
        self.count = count
        self.plan = plan
        self.memos: dict = {}  # type: ignore[type-arg]  # shared by the blocks (BlockEnv)

    def __len__(self) -> int:
        return self.count

    def blocks(self) -> Iterator[BlockEnv]:
        """Every row, evaluated, in blocks in grid order. A complete pass also gathers what
        the HTML summary needs (``Plan.summary``) unless an earlier pass did."""
        plan = self.plan
        if plan is None:
            return
        summary = None if plan.gathered is not None else GridSummary(
            grid_prompt(plan.grid, plan.view), headline_batch(plan.grid),
            reference_context(plan.grid, plan.view), plan.view.model,
            {w: i for i, w in enumerate(plan.grid.axes["weights"])}, ANSWER_WEIGHTS)
        for scenarios in scenario_blocks(plan.grid, plan.models, plan.gpus):
            first = plan.row_env(scenarios[0])
            block = BlockEnv(scenarios, first.model, first.gpu, plan.assumptions, self.memos)
            if summary is not None:
                summary.add(block)
            yield block
        if summary is not None:
            plan.gathered = summary

    def __iter__(self) -> Iterator[BlockRow]:
        for block in self.blocks():
            for i in range(block.size):
                yield BlockRow(block, i)


@dataclass
class Plan:
    models: Catalog
    gpus: Catalog
    grid: Grid
    assumptions: dict[str, float | str]
    overrides: dict[str, float | str]
    rows: GridRows
    generated: str = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc)
                           .strftime("%Y-%m-%d %H:%M UTC"))
    version: str = __version__
    model_envs: dict[str, ModelEnv] = field(default_factory=dict)
    workloads: Catalog = field(default_factory=lambda: Catalog(Path("-"), "", {}))
    servers: Catalog = field(default_factory=lambda: Catalog(Path("-"), "", {}))
    clouds: Catalog = field(default_factory=lambda: Catalog(Path("-"), "", {}))
    sized: list[Sized] = field(default_factory=list)
    swings: list[Swing] = field(default_factory=list)
    scenarios: list[NamedScenario] = field(default_factory=list)
    scenario_totals: list[dict[str, float]] = field(default_factory=list)
    schedules: list[WorkloadSchedule] = field(default_factory=list)  # the bought workloads'
    gathered: GridSummary | None = None  # left by the first complete pass over the rows

    @property
    def view(self) -> View:
        return self.grid.view

    @property
    def summary(self) -> GridSummary:
        """What the HTML shows of the grid (evaluating the rows once if nothing has yet)."""
        if self.gathered is None:
            for _ in self.rows.blocks():
                pass
        assert self.gathered is not None
        return self.gathered

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
               servers_path: Path | str = DEFAULT_SERVERS,
               scenarios_path: Path | str = DEFAULT_SCENARIOS,
               clouds_path: Path | str = DEFAULT_CLOUDS, check_only: bool = False) -> Plan:
    """The catalogs loaded, the grid checked and every workload sized, then what the budget is
    sensitive to, the scenarios and the schedule; with `check_only`, what would refuse to
    size checked and nothing sized: whether the inputs build, as `planner import-workbook`
    asks of what it writes."""
    from planner.inputs.overrides import apply

    extra = overrides or {}
    models = apply(load_models(models_path), "models", extra)
    gpus = apply(load_gpus(gpus_path), "gpus", extra)
    shipped = Path(servers_path) == DEFAULT_SERVERS and Path(workloads_path) == DEFAULT_WORKLOADS
    servers = apply(load_servers(servers_path, gpus, strict=not shipped), "servers", extra)
    workloads = apply(load_workloads(workloads_path, models, gpus, strict=not shipped),
                      "workloads", extra)
    clouds = apply(load_clouds(clouds_path, gpus, strict=Path(clouds_path) != DEFAULT_CLOUDS),
                   "clouds", extra)
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
    grid.skipped = skipped_rows(grid, models, gpus)
    plan = Plan(models, gpus, grid, resolve(overrides), dict(overrides or {}),
                GridRows(count_valid(grid, models, gpus)))
    plan.rows.plan = plan
    plan.workloads, plan.servers, plan.clouds = workloads, servers, clouds
    if check_only:
        if workloads.entries and servers.entries:
            check_sizable(workloads, models, servers, overrides)
        return plan
    if progress:
        progress("sizing workloads", 0, 1)
    plan.sized = size_all(workloads, models, gpus, servers, overrides, clouds=clouds) if (
        workloads.entries and servers.entries) else []
    if plan.sized:
        if progress:
            progress("sensitivity", 0, 1)
        plan.swings = sensitivity(plan.sized, models, gpus, servers, workloads,
                                  plan.assumptions, clouds)
        plan.scenarios = load_scenarios(scenarios_path)
        plan.scenario_totals = scenario_totals(plan.sized, plan.assumptions, plan.scenarios)
        plan.schedules = plan_schedules(plan.sized)
    return plan
