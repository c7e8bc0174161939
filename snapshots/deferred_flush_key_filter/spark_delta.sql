MERGE INTO `lake`.`sales`.`orders` AS `t`
USING (
  SELECT
    `id`,
    `region`,
    NOT MAX(`__sd_last_delete`) IS NULL AS `__sd_deleted`,
    NOT MAX(`__sd_first_upsert`) IS NULL AS `__sd_upserted`,
    MAX_BY(`amount`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_amount`) AS `amount`,
    MIN(`__sd_unmodified_amount`) AS `__sd_unmodified_amount`,
    MAX_BY(`amount`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_amount` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_amount`,
    MAX_BY(`note`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_note`) AS `note`,
    MIN(`__sd_unmodified_note`) AS `__sd_unmodified_note`,
    MAX_BY(`note`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_note` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_note`,
    MAX_BY(`_fivetran_synced`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_synced`) AS `_fivetran_synced`,
    MIN(`__sd_unmodified__fivetran_synced`) AS `__sd_unmodified__fivetran_synced`,
    MAX_BY(`_fivetran_synced`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_synced` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced__fivetran_synced`,
    MAX_BY(`_fivetran_deleted`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_deleted`) AS `_fivetran_deleted`,
    MIN(`__sd_unmodified__fivetran_deleted`) AS `__sd_unmodified__fivetran_deleted`,
    MAX_BY(`_fivetran_deleted`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_deleted` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced__fivetran_deleted`
  FROM (
    SELECT
      `id`,
      `region`,
      `amount`,
      `note`,
      `_fivetran_synced`,
      `_fivetran_deleted`,
      `__sd_unmodified_amount`,
      `__sd_unmodified_note`,
      `__sd_unmodified__fivetran_synced`,
      `__sd_unmodified__fivetran_deleted`,
      `__sd_op`,
      `__sd_seq`,
      `__sd_last_delete`,
      MIN(
        CASE
          WHEN `__sd_op` = 'upsert'
          AND (
            `__sd_last_delete` IS NULL OR `__sd_seq` > `__sd_last_delete`
          )
          THEN `__sd_seq`
        END
      ) OVER (PARTITION BY `id`, `region`) AS `__sd_first_upsert`
    FROM (
      SELECT
        `id`,
        `region`,
        `amount`,
        `note`,
        `_fivetran_synced`,
        `_fivetran_deleted`,
        `__sd_unmodified_amount`,
        `__sd_unmodified_note`,
        `__sd_unmodified__fivetran_synced`,
        `__sd_unmodified__fivetran_deleted`,
        `__sd_op`,
        `__sd_seq`,
        MAX(CASE WHEN `__sd_op` = 'delete' THEN `__sd_seq` END) OVER (PARTITION BY `id`, `region`) AS `__sd_last_delete`
      FROM `lake`.`sales`.`sd__pending__orders`
      WHERE
        `__sd_seq` <= :sd_flush_high
    ) AS `d`
  ) AS `r`
  GROUP BY
    `id`,
    `region`
) AS `s`
ON (
  `t`.`id` = `s`.`id` AND `t`.`region` = `s`.`region`
)
AND `t`.`id` IN (:sd_key_0_0, :sd_key_0_1, :sd_key_0_2, :sd_key_0_3)
AND `t`.`region` IN (:sd_key_1_0, :sd_key_1_1, :sd_key_1_2, :sd_key_1_3)
WHEN MATCHED AND `s`.`__sd_deleted` AND NOT `s`.`__sd_upserted` THEN DELETE
WHEN MATCHED AND `s`.`__sd_deleted` THEN UPDATE SET
  `t`.`amount` = `s`.`__sd_replaced_amount`,
  `t`.`note` = `s`.`__sd_replaced_note`,
  `t`.`_fivetran_synced` = `s`.`__sd_replaced__fivetran_synced`,
  `t`.`_fivetran_deleted` = `s`.`__sd_replaced__fivetran_deleted`
WHEN MATCHED THEN UPDATE SET
  `t`.`amount` = CASE WHEN `s`.`__sd_unmodified_amount` THEN `t`.`amount` ELSE `s`.`amount` END,
  `t`.`note` = CASE WHEN `s`.`__sd_unmodified_note` THEN `t`.`note` ELSE `s`.`note` END,
  `t`.`_fivetran_synced` = CASE
    WHEN `s`.`__sd_unmodified__fivetran_synced`
    THEN `t`.`_fivetran_synced`
    ELSE `s`.`_fivetran_synced`
  END,
  `t`.`_fivetran_deleted` = CASE
    WHEN `s`.`__sd_unmodified__fivetran_deleted`
    THEN `t`.`_fivetran_deleted`
    ELSE `s`.`_fivetran_deleted`
  END
WHEN NOT MATCHED AND `s`.`__sd_upserted` THEN INSERT (`id`, `region`, `amount`, `note`, `_fivetran_synced`, `_fivetran_deleted`) VALUES (
  `s`.`id`,
  `s`.`region`,
  `s`.`__sd_replaced_amount`,
  `s`.`__sd_replaced_note`,
  `s`.`__sd_replaced__fivetran_synced`,
  `s`.`__sd_replaced__fivetran_deleted`
)
