"""GPU capacity planning for LLM inference: arithmetic, catalogs, workbook and HTML summary."""

__version__ = "0.1.0"
