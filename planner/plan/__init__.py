"""Everything computed, nothing rendered: one configuration (calc), a workload's fleet
(sizing), the whole plan evaluated once (plan), scenarios, sensitivity, summaries, and the
comparison of a log with the planner (calibration)."""
