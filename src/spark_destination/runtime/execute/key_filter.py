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
    """Marker name -> value for the staged batch's distinct ``keys`` (its key columns, each
    key once: ``StagedBatch.keys``), or None when the filter cannot serve: no keys, or more keys
    than markers (the filter is for small batches; a large one reads most of the table
    anyway, and is refused here before any of its values is looked at)."""
    if keys is None or keys.num_rows == 0:
        return None
    args: dict[str, object] = {}
    for name, markers in key_filter.columns:
        if keys.num_rows > len(markers):
            return None
        values = pc.unique(keys.column(name)).drop_null().to_pylist()
        if not values:
            return None
        padded = values + [values[0]] * (len(markers) - len(values))
        args.update(zip(markers, padded, strict=True))
    return args
