SELECT
  (
    SELECT
      COUNT(*)
    FROM `lake`.`my-schema.v2`.`order ``items`` 2024`.`data_files`
  ) AS `data_files`,
  (
    SELECT
      COUNT(*)
    FROM `lake`.`my-schema.v2`.`order ``items`` 2024`.`delete_files`
  ) AS `delete_files`,
  (
    SELECT
      COUNT(*)
    FROM `lake`.`my-schema.v2`.`order ``items`` 2024`.`snapshots`
  ) AS `snapshots`,
  (
    SELECT
      UNIX_MILLIS(MIN(`committed_at`))
    FROM `lake`.`my-schema.v2`.`order ``items`` 2024`.`snapshots`
  ) AS `oldest_snapshot_ms`,
  (
    SELECT
      COUNT(*)
    FROM `lake`.`my-schema.v2`.`order ``items`` 2024`.`refs`
    WHERE
      `name` <> 'main'
      OR NOT `max_reference_age_in_ms` IS NULL
      OR NOT `min_snapshots_to_keep` IS NULL
      OR NOT `max_snapshot_age_in_ms` IS NULL
  ) AS `refs_with_own_retention`
