"""Which commits of a Delta table's log the table still holds after RESTOREs
(``runtime.execute.delta_log``)."""

from __future__ import annotations

from spark_destination.runtime.execute.delta_log import DeltaCommit, live_commit

FLUSH = '{"spark-destination.flush-id": "f1"}'


def commit(
    version: int, metadata: str | None = None, restored_to: int | None = None
) -> DeltaCommit:
    return DeltaCommit(version=version, user_metadata=metadata, restored_to=restored_to)


def test_a_commit_carrying_the_id_is_live_until_a_later_restore_goes_back_before_it() -> None:
    assert live_commit([commit(6), commit(5, FLUSH)], "f1")
    # A failed flush's restore: version 7 puts the table back at 4, before the MERGE at 5.
    assert not live_commit([commit(7, restored_to=4), commit(6), commit(5, FLUSH)], "f1")
    # A restore to a version at or after the commit keeps it.
    assert live_commit([commit(7, restored_to=5), commit(6), commit(5, FLUSH)], "f1")


def test_restores_are_followed_back_to_the_version_they_name() -> None:
    history = [commit(9, restored_to=8), commit(8), commit(7, restored_to=3), commit(5, FLUSH)]
    assert not live_commit(history, "f1")
    # Undone at 7, then brought back: 9 restores version 6, which holds the MERGE at 5.
    back = [
        commit(9, restored_to=6),
        commit(8),
        commit(7, restored_to=3),
        commit(6),
        commit(5, FLUSH),
    ]
    assert live_commit(back, "f1")
    assert not live_commit([commit(2), commit(1, '{"other": "x"}')], "f1")
    assert not live_commit([], "f1")
