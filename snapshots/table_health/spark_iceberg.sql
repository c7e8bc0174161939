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
  ) AS `snapshots`
