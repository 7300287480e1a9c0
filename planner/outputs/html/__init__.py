"""The HTML summary: the report and its sections (budget, accuracy) and its SVG charts."""
