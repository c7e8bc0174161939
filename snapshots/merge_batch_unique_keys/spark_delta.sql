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
