"""Binding a small batch's keys to the batch MERGE's key-filter markers (``Form.KEY_FILTER``).

The runtime does not render: the statement already holds the markers; this module only picks
the values they bind to. Values travel as bound parameters, never as SQL text, so the text
that runs, and any log line quoting it, holds no key.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from spark_destination.dialects.rendered import KeyFilter


def key_filter_args(key_filter: KeyFilter, keys: pa.Table | None) -> dict[str, object] | None:
    """Marker name -> value for the staged batch's ``keys`` (its key columns), or None when
    the filter cannot serve: no rows, or more distinct values in a column than it has markers
    (the filter is for small batches; a large one reads most of the table anyway). Distinct
    values, not rows: a batch that names a key twice (upserted, then deleted) binds it once."""
    if keys is None or keys.num_rows == 0:
        return None
    args: dict[str, object] = {}
    for name, markers in key_filter.columns:
        # Counted in Arrow before any value becomes a Python object: a big batch has many.
        distinct = pc.unique(keys.column(name)).drop_null()
        if len(distinct) == 0 or len(distinct) > len(markers):
            return None
        values = distinct.to_pylist()
        padded = values + [values[0]] * (len(markers) - len(values))
        args.update(zip(markers, padded, strict=True))
    return args
