"""A workbook read back: ``diff`` (what an edited workbook changed) and ``import-workbook``
(those edits written to catalogs)."""
