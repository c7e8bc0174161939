MERGE INTO `lake`.`my-schema.v2`.`order ``items`` history` AS `t`
USING (
  WITH `__sd_rows` AS (
    SELECT
      CAST(`id` AS INT) AS `id`,
      `region` AS `region`,
      CAST(`_fivetran_start` AS TIMESTAMP) AS `_fivetran_start`,
      ARRAY(CAST(`amount` AS DECIMAL(10, 2))) AS `amount`,
      ARRAY(`note``s`) AS `note``s`,
      ARRAY(CAST(`_fivetran_end` AS TIMESTAMP)) AS `_fivetran_end`,
      ARRAY(CAST(`_fivetran_active` AS BOOLEAN)) AS `_fivetran_active`,
      ARRAY(CAST(`_fivetran_synced` AS TIMESTAMP)) AS `_fivetran_synced`,
      `__sd_op`,
      `__sd_seq`
    FROM `sd_batch`
  ), `__sd_keys` AS (
    SELECT
      `id`,
      `region`,
      LEAST(
        MIN(CASE WHEN `__sd_op` IN ('earliest_start') THEN `_fivetran_start` END),
        MIN(CASE WHEN `__sd_op` IN ('update', 'upsert') THEN `_fivetran_start` END)
      ) AS `__sd_earliest`,
      MAX(CASE WHEN `__sd_op` IN ('delete') THEN ELEMENT_AT(`_fivetran_end`, 1) END) AS `__sd_deleted_at`
    FROM `__sd_rows`
    GROUP BY
      `id`,
      `region`
  ), `__sd_before` AS (
    SELECT
      *,
      ROW_NUMBER() OVER (PARTITION BY `id`, `region`, `__sd_survives` ORDER BY `_fivetran_start` DESC) AS `__sd_rank`
    FROM (
      SELECT
        `t`.`id`,
        `t`.`region`,
        `t`.`_fivetran_start`,
        `t`.`amount`,
        `t`.`note``s`,
        `t`.`_fivetran_end`,
        `t`.`_fivetran_active`,
        `t`.`_fivetran_synced`,
        `k`.`__sd_earliest`,
        `k`.`__sd_deleted_at`,
        `k`.`__sd_earliest` IS NULL OR `t`.`_fivetran_start` < `k`.`__sd_earliest` AS `__sd_survives`
      FROM `lake`.`my-schema.v2`.`order ``items`` history` AS `t`
      INNER JOIN `__sd_keys` AS `k`
        ON `t`.`id` = `k`.`id` AND `t`.`region` = `k`.`region`
    ) AS `b`
  ), `__sd_versions` AS (
    SELECT
      `id`,
      `region`,
      `_fivetran_start`,
      `amount`,
      `note``s`,
      `_fivetran_end`,
      `_fivetran_active`,
      `_fivetran_synced`,
      1 AS `__sd_order`,
      `__sd_seq`
    FROM `__sd_rows`
    WHERE
      `__sd_op` IN ('update', 'upsert')
    UNION ALL
    SELECT
      `id`,
      `region`,
      `_fivetran_start`,
      ARRAY(`amount`) AS `amount`,
      ARRAY(`note``s`) AS `note``s`,
      ARRAY(`_fivetran_end`) AS `_fivetran_end`,
      ARRAY(`_fivetran_active`) AS `_fivetran_active`,
      ARRAY(`_fivetran_synced`) AS `_fivetran_synced`,
      0 AS `__sd_order`,
      -1 AS `__sd_seq`
    FROM `__sd_before`
    WHERE
      `__sd_survives` AND `__sd_rank` = 1
  ), `__sd_filled` AS (
    SELECT
      `id`,
      `region`,
      `_fivetran_start`,
      ELEMENT_AT(
        LAST(`amount`) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `amount`,
      ELEMENT_AT(
        LAST(`note``s`) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `note``s`,
      ELEMENT_AT(
        LAST(`_fivetran_end`) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `_fivetran_end`,
      ELEMENT_AT(
        LAST(`_fivetran_active`) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `_fivetran_active`,
      ELEMENT_AT(
        LAST(`_fivetran_synced`) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `_fivetran_synced`,
      `__sd_order`,
      ROW_NUMBER() OVER (PARTITION BY `id`, `region`, `_fivetran_start` ORDER BY `__sd_seq` DESC) AS `__sd_dup`
    FROM `__sd_versions`
  )
  SELECT
    `f`.`id`,
    `f`.`region`,
    `f`.`_fivetran_start`,
    `f`.`amount` AS `amount`,
    `f`.`note``s` AS `note``s`,
    CASE
      WHEN NOT `k`.`__sd_deleted_at` IS NULL AND `f`.`_fivetran_active`
      THEN `k`.`__sd_deleted_at`
      ELSE `f`.`_fivetran_end`
    END AS `_fivetran_end`,
    CASE
      WHEN NOT `k`.`__sd_deleted_at` IS NULL
      THEN FALSE
      ELSE `f`.`_fivetran_active`
    END AS `_fivetran_active`,
    `f`.`_fivetran_synced` AS `_fivetran_synced`,
    'insert' AS `__sd_action`
  FROM `__sd_filled` AS `f`
  INNER JOIN `__sd_keys` AS `k`
    ON `f`.`id` = `k`.`id` AND `f`.`region` = `k`.`region`
  WHERE
    `f`.`__sd_order` = 1 AND `f`.`__sd_dup` = 1
  UNION ALL
  SELECT
    `b`.`id`,
    `b`.`region`,
    `b`.`_fivetran_start`,
    NULL AS `amount`,
    NULL AS `note``s`,
    CASE
      WHEN NOT `b`.`__sd_earliest` IS NULL
      THEN `b`.`__sd_earliest` - INTERVAL '1' MILLISECOND
      ELSE `b`.`__sd_deleted_at`
    END AS `_fivetran_end`,
    FALSE AS `_fivetran_active`,
    NULL AS `_fivetran_synced`,
    CASE WHEN `b`.`__sd_survives` THEN 'close' ELSE 'delete' END AS `__sd_action`
  FROM `__sd_before` AS `b`
  WHERE
    NOT `b`.`__sd_survives`
    OR (
      NOT `b`.`__sd_earliest` IS NULL
      AND (
        `b`.`_fivetran_active`
        OR (
          `b`.`__sd_rank` = 1 AND `b`.`_fivetran_end` >= `b`.`__sd_earliest`
        )
      )
    )
    OR (
      `b`.`__sd_earliest` IS NULL
      AND NOT `b`.`__sd_deleted_at` IS NULL
      AND `b`.`_fivetran_active`
    )
) AS `s`
ON (
  `t`.`id` = `s`.`id`
  AND `t`.`region` = `s`.`region`
  AND `t`.`_fivetran_start` = `s`.`_fivetran_start`
)
AND `s`.`__sd_action` <> 'insert'
WHEN MATCHED AND `s`.`__sd_action` = 'delete' THEN DELETE
WHEN MATCHED THEN UPDATE SET
  `t`.`_fivetran_end` = `s`.`_fivetran_end`,
  `t`.`_fivetran_active` = `s`.`_fivetran_active`
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
