MERGE INTO `lake`.`sales`.`orders` AS `t`
USING (
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
    `__sd_op`
  FROM `sd_batch`
  WHERE
    NOT `__sd_dup`
  UNION ALL
  SELECT
    `id`,
    `region`,
    MAX_BY(`amount`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_amount`) AS `amount`,
    MAX_BY(`note`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_note`) AS `note`,
    MAX_BY(`_fivetran_synced`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_synced`) AS `_fivetran_synced`,
    MAX_BY(`_fivetran_deleted`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_deleted`) AS `_fivetran_deleted`,
    MIN(`__sd_unmodified_amount`) AS `__sd_unmodified_amount`,
    MIN(`__sd_unmodified_note`) AS `__sd_unmodified_note`,
    MIN(`__sd_unmodified__fivetran_synced`) AS `__sd_unmodified__fivetran_synced`,
    MIN(`__sd_unmodified__fivetran_deleted`) AS `__sd_unmodified__fivetran_deleted`,
    CASE
      WHEN MAX(`__sd_op` = 'delete')
      THEN 'delete'
      WHEN MAX(`__sd_op` = 'upsert')
      THEN 'upsert'
      ELSE 'update'
    END AS `__sd_op`
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
      `__sd_seq`
    FROM `sd_batch`
    WHERE
      `__sd_dup`
  ) AS `b`
  GROUP BY
    `id`,
    `region`
) AS `s`
ON `t`.`id` = `s`.`id` AND `t`.`region` = `s`.`region`
WHEN MATCHED AND `s`.`__sd_op` = 'delete' THEN DELETE
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
WHEN NOT MATCHED AND `s`.`__sd_op` = 'upsert' THEN INSERT (`id`, `region`, `amount`, `note`, `_fivetran_synced`, `_fivetran_deleted`) VALUES (
  `s`.`id`,
  `s`.`region`,
  `s`.`amount`,
  `s`.`note`,
  `s`.`_fivetran_synced`,
  `s`.`_fivetran_deleted`
)
