"""What the planner computes, as definitions: units, number formats, the expression tree that
is both a value and an Excel formula, the row quantities (one configuration), the fleet
quantities (one workload) and the engine table. Pure: no files, no catalogs, no output."""
