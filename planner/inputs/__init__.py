"""What the user gives: YAML read with locations, the catalogs (models, GPUs, servers,
workloads, grid), assumptions, overrides and ``--set``, a scenario, and the Hugging Face
importer. Imports only :mod:`planner.model` and :mod:`planner.errors`."""
