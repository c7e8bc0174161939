MERGE INTO `lake`.`sales`.`orders_history` AS `t`
USING (
  WITH `__sd_per_key` AS (
    SELECT
      `id`,
      `region`,
      LEAST(
        MIN(CASE WHEN `__sd_op` IN ('earliest_start') THEN `_fivetran_start` END),
        MIN(CASE WHEN `__sd_op` IN ('update', 'upsert') THEN `_fivetran_start` END)
      ) AS `__sd_earliest`,
      MAX(CASE WHEN `__sd_op` IN ('delete') THEN `_fivetran_end` END) AS `__sd_deleted_at`
    FROM `sd_batch`
    GROUP BY
      `id`,
      `region`
  ), `__sd_newest_stored` AS (
    SELECT
      `k`.`id`,
      `k`.`region`,
      `k`.`__sd_earliest`,
      `k`.`__sd_deleted_at`,
      MAX_BY(
        STRUCT(
          `t`.`amount` AS `amount`,
          `t`.`note``s` AS `note``s`,
          `t`.`_fivetran_end` AS `_fivetran_end`,
          `t`.`_fivetran_active` AS `_fivetran_active`,
          `t`.`_fivetran_synced` AS `_fivetran_synced`
        ),
        `t`.`_fivetran_start`
      ) AS `__sd_stored_values`
    FROM `__sd_per_key` AS `k`
    LEFT JOIN `lake`.`sales`.`orders_history` AS `t`
      ON (
        `k`.`id` = `t`.`id` AND `k`.`region` = `t`.`region`
      )
      AND `t`.`_fivetran_start` < `k`.`__sd_earliest`
    GROUP BY
      `k`.`id`,
      `k`.`region`,
      `k`.`__sd_earliest`,
      `k`.`__sd_deleted_at`
  ), `__sd_filled` AS (
    SELECT
      `r`.`id`,
      `r`.`region`,
      CASE
        WHEN `r`.`__sd_unmodified_amount`
        THEN `b`.`__sd_stored_values`.`amount`
        ELSE `r`.`amount`
      END AS `amount`,
      CASE
        WHEN `r`.`__sd_unmodified_note``s`
        THEN `b`.`__sd_stored_values`.`note``s`
        ELSE `r`.`note``s`
      END AS `note``s`,
      `r`.`_fivetran_start`,
      CASE
        WHEN `r`.`__sd_unmodified__fivetran_end`
        THEN `b`.`__sd_stored_values`.`_fivetran_end`
        ELSE `r`.`_fivetran_end`
      END AS `_fivetran_end`,
      CASE
        WHEN `r`.`__sd_unmodified__fivetran_active`
        THEN `b`.`__sd_stored_values`.`_fivetran_active`
        ELSE `r`.`_fivetran_active`
      END AS `_fivetran_active`,
      CASE
        WHEN `r`.`__sd_unmodified__fivetran_synced`
        THEN `b`.`__sd_stored_values`.`_fivetran_synced`
        ELSE `r`.`_fivetran_synced`
      END AS `_fivetran_synced`,
      `b`.`__sd_deleted_at`
    FROM `sd_batch` AS `r`
    JOIN `__sd_newest_stored` AS `b`
      ON `r`.`id` = `b`.`id` AND `r`.`region` = `b`.`region`
    WHERE
      `r`.`__sd_op` IN ('update', 'upsert')
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
  FROM `__sd_filled`
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
  FROM `__sd_per_key`
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
