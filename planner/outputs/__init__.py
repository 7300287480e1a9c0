"""Everything rendered from a plan: the workbook, the HTML report, the terminal text, files
written atomically and progress. Reads plans; computes nothing the plan does not hold."""
