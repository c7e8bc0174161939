CREATE TABLE IF NOT EXISTS `lake`.`sales`.`sd__changes` (
  `table_name` STRING,
  `column_name` STRING,
  `change` STRING,
  `reason` STRING,
  `batch_file` STRING,
  `file_row` BIGINT,
  `primary_key` STRING,
  `_fivetran_synced` TIMESTAMP,
  `recorded_at` TIMESTAMP
)
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported'
);

MERGE INTO `lake`.`sales`.`sd__changes` AS `t`
USING (
  SELECT
    'orders' AS `table_name`,
    `column_name`,
    `change`,
    `reason`,
    `batch_file`,
    `file_row`,
    TO_JSON(STRUCT(`__sd_key_0` AS `id`, `__sd_key_1` AS `region`)) AS `primary_key`,
    CAST(`__sd_synced` AS TIMESTAMP) AS `_fivetran_synced`,
    CURRENT_TIMESTAMP() AS `recorded_at`
  FROM `sd_changes`
) AS `s`
ON `t`.`table_name` = 'orders'
AND `t`.`batch_file` = `s`.`batch_file`
AND `t`.`file_row` = `s`.`file_row`
AND `t`.`column_name` = `s`.`column_name`
AND `t`.`_fivetran_synced` IS NOT DISTINCT FROM `s`.`_fivetran_synced`
WHEN NOT MATCHED THEN INSERT (
  `table_name`,
  `column_name`,
  `change`,
  `reason`,
  `batch_file`,
  `file_row`,
  `primary_key`,
  `_fivetran_synced`,
  `recorded_at`
) VALUES (
  `s`.`table_name`,
  `s`.`column_name`,
  `s`.`change`,
  `s`.`reason`,
  `s`.`batch_file`,
  `s`.`file_row`,
  `s`.`primary_key`,
  `s`.`_fivetran_synced`,
  `s`.`recorded_at`
)
