"""A workbook read back: ``diff`` (what an edited workbook changed) and ``import-workbook``
(those edits written to catalogs). Both read it through ``reader`` (opening it, its About
record, its cells and their names), find what it was built from with ``sources`` and judge
cells with ``compare``; ``importing`` edits YAML in place with ``yamltext``."""
