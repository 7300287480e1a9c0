"""Cached data for native charts, so a previewer that does not calculate still draws them.

openpyxl writes chart series as references only; Excel and LibreOffice recompute them, but
mail previews and Quick Look draw from the cache in the chart part. We fill it with the same
Python values the referenced cells cache.
"""

from __future__ import annotations

from collections.abc import Sequence

from openpyxl.chart.data_source import (
    AxDataSource,
    NumData,
    NumVal,
    StrData,
    StrRef,
    StrVal,
)

from planner.model.expr import Value


def _num_data(values: Sequence[Value]) -> NumData:
    points = [NumVal(idx=i, v=float(v)) for i, v in enumerate(values)
              if isinstance(v, int | float) and not isinstance(v, bool)]
    return NumData(pt=points, ptCount=len(values), formatCode="General")


def _str_data(values: Sequence[object]) -> StrData:
    return StrData(pt=[StrVal(idx=i, v=str(v)) for i, v in enumerate(values)],
                   ptCount=len(values))


def cache_chart(chart, titles: Sequence[object], categories: Sequence[object],  # type: ignore[no-untyped-def]
                series_values: Sequence[Sequence[Value]]) -> None:
    """Attach titles, category labels and values to each series of `chart`, in order."""
    for series, title, values in zip(chart.series, titles, series_values, strict=True):
        if series.tx is not None and series.tx.strRef is not None:
            series.tx.strRef.strCache = _str_data([title])
        series.val.numRef.numCache = _num_data(values)
        ref = series.cat.numRef.f if series.cat and series.cat.numRef else None
        if ref is not None:
            if all(isinstance(c, int | float) for c in categories):
                series.cat.numRef.numCache = _num_data(list(categories))  # type: ignore[arg-type]
            else:  # text categories (GPU ids) belong in a string reference
                series.cat = AxDataSource(strRef=StrRef(f=ref, strCache=_str_data(categories)))
