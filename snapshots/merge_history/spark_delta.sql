MERGE INTO `lake`.`sales`.`orders_history` AS `t`
USING (
  WITH `__sd_rows` AS (
    SELECT
      `id`,
      `region`,
      `_fivetran_start`,
      CASE WHEN `__sd_unmodified_amount` THEN NULL ELSE ARRAY(`amount`) END AS `amount`,
      CASE WHEN `__sd_unmodified_note``s` THEN NULL ELSE ARRAY(`note``s`) END AS `note``s`,
      CASE WHEN `__sd_unmodified__fivetran_end` THEN NULL ELSE ARRAY(`_fivetran_end`) END AS `_fivetran_end`,
      CASE
        WHEN `__sd_unmodified__fivetran_active`
        THEN NULL
        ELSE ARRAY(`_fivetran_active`)
      END AS `_fivetran_active`,
      CASE
        WHEN `__sd_unmodified__fivetran_synced`
        THEN NULL
        ELSE ARRAY(`_fivetran_synced`)
      END AS `_fivetran_synced`,
      `__sd_op`,
      `__sd_seq`
    FROM `sd_batch`
  ), `__sd_all` AS (
    SELECT
      `id`,
      `region`,
      `_fivetran_start`,
      `amount`,
      `note``s`,
      `_fivetran_end`,
      `_fivetran_active`,
      `_fivetran_synced`,
      `__sd_op`,
      `__sd_seq`,
      CASE WHEN `__sd_op` IN ('update', 'upsert') THEN 1 ELSE 2 END AS `__sd_order`
    FROM `__sd_rows`
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
      NULL AS `__sd_op`,
      -1 AS `__sd_seq`,
      0 AS `__sd_order`
    FROM `lake`.`sales`.`orders_history`
    WHERE
      (`id`, `region`) IN (
        SELECT
          `id`,
          `region`
        FROM `__sd_rows`
      )
  ), `__sd_windowed` AS (
    SELECT
      *,
      LEAST(
        MIN(CASE WHEN `__sd_op` IN ('earliest_start') THEN `_fivetran_start` END) OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
        ),
        MIN(CASE WHEN `__sd_op` IN ('update', 'upsert') THEN `_fivetran_start` END) OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
        )
      ) AS `__sd_earliest`,
      MAX(CASE WHEN `__sd_op` IN ('delete') THEN ELEMENT_AT(`_fivetran_end`, 1) END) OVER (
        PARTITION BY `id`, `region`
        ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
        ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
      ) AS `__sd_deleted_at`,
      ROW_NUMBER() OVER (
        PARTITION BY `id`, `region`
        ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
      ) AS `__sd_pos`,
      LEAD(`__sd_order`, 1, -1) OVER (
        PARTITION BY `id`, `region`
        ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
      ) AS `__sd_next_order`,
      LEAD(`_fivetran_start`) OVER (
        PARTITION BY `id`, `region`
        ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
      ) AS `__sd_next_start`
    FROM `__sd_all`
  ), `__sd_based` AS (
    SELECT
      *,
      `__sd_earliest` IS NULL OR `_fivetran_start` < `__sd_earliest` AS `__sd_survives`,
      MAX(
        CASE
          WHEN `__sd_order` = 0
          AND (
            `__sd_earliest` IS NULL OR `_fivetran_start` < `__sd_earliest`
          )
          THEN `__sd_pos`
        END
      ) OVER (
        PARTITION BY `id`, `region`
        ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
        ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
      ) AS `__sd_base`
    FROM `__sd_windowed`
  ), `__sd_filled` AS (
    SELECT
      `id`,
      `region`,
      `_fivetran_start`,
      ELEMENT_AT(
        LAST(CASE WHEN `__sd_order` = 1 OR `__sd_pos` = `__sd_base` THEN `amount` END) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `amount`,
      ELEMENT_AT(
        LAST(CASE WHEN `__sd_order` = 1 OR `__sd_pos` = `__sd_base` THEN `note``s` END) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `note``s`,
      ELEMENT_AT(
        LAST(CASE WHEN `__sd_order` = 1 OR `__sd_pos` = `__sd_base` THEN `_fivetran_end` END) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `_fivetran_end`,
      ELEMENT_AT(
        LAST(
          CASE WHEN `__sd_order` = 1 OR `__sd_pos` = `__sd_base` THEN `_fivetran_active` END
        ) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `_fivetran_active`,
      ELEMENT_AT(
        LAST(
          CASE WHEN `__sd_order` = 1 OR `__sd_pos` = `__sd_base` THEN `_fivetran_synced` END
        ) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `_fivetran_synced`,
      ELEMENT_AT(`_fivetran_end`, 1) AS `__sd_stored__fivetran_end`,
      ELEMENT_AT(`_fivetran_active`, 1) AS `__sd_stored__fivetran_active`,
      `__sd_order`,
      `__sd_earliest`,
      `__sd_deleted_at`,
      `__sd_survives`,
      `__sd_pos`,
      `__sd_base`,
      `__sd_order` = 1
      AND NOT (
        `__sd_next_order` = 1 AND `__sd_next_start` = `_fivetran_start`
      ) AS `__sd_last`
    FROM `__sd_based`
  )
  SELECT
    `id`,
    `region`,
    `_fivetran_start`,
    CASE WHEN `__sd_order` = 1 THEN `amount` ELSE NULL END AS `amount`,
    CASE WHEN `__sd_order` = 1 THEN `note``s` ELSE NULL END AS `note``s`,
    CASE
      WHEN `__sd_order` = 1
      THEN CASE
        WHEN NOT `__sd_deleted_at` IS NULL AND `_fivetran_active`
        THEN `__sd_deleted_at`
        ELSE `_fivetran_end`
      END
      ELSE CASE
        WHEN NOT `__sd_earliest` IS NULL
        THEN `__sd_earliest` - INTERVAL '1' MILLISECOND
        ELSE `__sd_deleted_at`
      END
    END AS `_fivetran_end`,
    CASE
      WHEN `__sd_order` = 1
      THEN CASE WHEN NOT `__sd_deleted_at` IS NULL THEN FALSE ELSE `_fivetran_active` END
      ELSE FALSE
    END AS `_fivetran_active`,
    CASE WHEN `__sd_order` = 1 THEN `_fivetran_synced` ELSE NULL END AS `_fivetran_synced`,
    CASE
      WHEN `__sd_order` = 1
      THEN 'insert'
      WHEN `__sd_survives`
      THEN 'close'
      ELSE 'delete'
    END AS `__sd_action`
  FROM `__sd_filled`
  WHERE
    (
      `__sd_order` = 1 AND `__sd_last`
    )
    OR (
      `__sd_order` = 0
      AND (
        NOT `__sd_survives`
        OR (
          NOT `__sd_earliest` IS NULL
          AND (
            `__sd_stored__fivetran_active`
            OR (
              `__sd_pos` = `__sd_base` AND `__sd_stored__fivetran_end` >= `__sd_earliest`
            )
          )
        )
        OR (
          `__sd_earliest` IS NULL
          AND NOT `__sd_deleted_at` IS NULL
          AND `__sd_stored__fivetran_active`
        )
      )
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
