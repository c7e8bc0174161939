MERGE INTO `lake`.`sales`.`orders_history` AS `t`
USING (
  WITH `__sd_keyed` AS (
    SELECT
      *,
      LEAST(
        MIN(CASE WHEN `__sd_op` IN ('earliest_start') THEN `_fivetran_start` END) OVER (PARTITION BY `id`, `region`),
        MIN(CASE WHEN `__sd_op` IN ('update', 'upsert') THEN `_fivetran_start` END) OVER (PARTITION BY `id`, `region`)
      ) AS `__sd_earliest`,
      MAX(CASE WHEN `__sd_op` IN ('delete') THEN `_fivetran_end` END) OVER (PARTITION BY `id`, `region`) AS `__sd_deleted_at`,
      ROW_NUMBER() OVER (PARTITION BY `id`, `region` ORDER BY `__sd_seq` NULLS LAST) AS `__sd_pos`
    FROM `sd_batch`
  )
  SELECT
    `id`,
    `region`,
    `amount`,
    `note``s`,
    `_fivetran_start`,
    CASE
      WHEN NOT `__sd_deleted_at` IS NULL AND `_fivetran_active`
      THEN `__sd_deleted_at`
      ELSE `_fivetran_end`
    END AS `_fivetran_end`,
    CASE WHEN NOT `__sd_deleted_at` IS NULL THEN FALSE ELSE `_fivetran_active` END AS `_fivetran_active`,
    `_fivetran_synced`,
    NULL AS `__sd_earliest`,
    NULL AS `__sd_deleted_at`,
    'insert' AS `__sd_action`
  FROM `__sd_keyed`
  WHERE
    `__sd_op` IN ('update', 'upsert')
  UNION ALL
  SELECT
    `id`,
    `region`,
    NULL AS `amount`,
    NULL AS `note``s`,
    NULL AS `_fivetran_start`,
    NULL AS `_fivetran_end`,
    NULL AS `_fivetran_active`,
    NULL AS `_fivetran_synced`,
    `__sd_earliest`,
    `__sd_deleted_at`,
    'close' AS `__sd_action`
  FROM `__sd_keyed`
  WHERE
    `__sd_pos` = 1
) AS `s`
ON (
  `t`.`id` = `s`.`id` AND `t`.`region` = `s`.`region`
)
AND `s`.`__sd_action` = 'close'
WHEN MATCHED AND `t`.`_fivetran_start` >= `s`.`__sd_earliest` THEN DELETE
WHEN MATCHED AND NOT `s`.`__sd_earliest` IS NULL
AND (
  `t`.`_fivetran_active` OR `t`.`_fivetran_end` >= `s`.`__sd_earliest`
) THEN UPDATE SET
  `t`.`_fivetran_end` = `s`.`__sd_earliest` - INTERVAL '1' MILLISECOND,
  `t`.`_fivetran_active` = FALSE
WHEN MATCHED AND `s`.`__sd_earliest` IS NULL
AND NOT `s`.`__sd_deleted_at` IS NULL
AND `t`.`_fivetran_active` THEN UPDATE SET
  `t`.`_fivetran_end` = `s`.`__sd_deleted_at`,
  `t`.`_fivetran_active` = FALSE
WHEN NOT MATCHED AND `s`.`__sd_action` = 'insert' THEN INSERT (
  `id`,
  `region`,
  `amount`,
  `note``s`,
  `_fivetran_start`,
  `_fivetran_end`,
  `_fivetran_active`,
  `_fivetran_synced`
) VALUES (
  `s`.`id`,
  `s`.`region`,
  `s`.`amount`,
  `s`.`note``s`,
  `s`.`_fivetran_start`,
  `s`.`_fivetran_end`,
  `s`.`_fivetran_active`,
  `s`.`_fivetran_synced`
)
