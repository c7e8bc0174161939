MERGE INTO `lake`.`sales`.`orders` AS `t`
USING (
  SELECT
    `_fivetran_id`,
    `name`,
    `_fivetran_synced`,
    `__sd_op`
  FROM `sd_batch`
  WHERE
    NOT `__sd_dup`
  UNION ALL
  SELECT
    `_fivetran_id`,
    MAX_BY(`name`, `__sd_seq`) AS `name`,
    MAX_BY(`_fivetran_synced`, `__sd_seq`) AS `_fivetran_synced`,
    CASE
      WHEN MAX(`__sd_op` = 'delete')
      THEN 'delete'
      WHEN MAX(`__sd_op` = 'upsert')
      THEN 'upsert'
      ELSE 'update'
    END AS `__sd_op`
  FROM (
    SELECT
      `_fivetran_id`,
      `name`,
      `_fivetran_synced`,
      `__sd_op`,
      `__sd_seq`
    FROM `sd_batch`
    WHERE
      `__sd_dup`
  ) AS `b`
  GROUP BY
    `_fivetran_id`
) AS `s`
ON `t`.`_fivetran_id` = `s`.`_fivetran_id`
WHEN MATCHED AND `s`.`__sd_op` = 'delete' THEN DELETE
WHEN MATCHED THEN UPDATE SET
  `t`.`name` = `s`.`name`,
  `t`.`_fivetran_synced` = `s`.`_fivetran_synced`
WHEN NOT MATCHED AND `s`.`__sd_op` = 'upsert' THEN INSERT (`_fivetran_id`, `name`, `_fivetran_synced`) VALUES (`s`.`_fivetran_id`, `s`.`name`, `s`.`_fivetran_synced`)
