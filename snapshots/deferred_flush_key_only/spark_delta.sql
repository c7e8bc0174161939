MERGE INTO `lake`.`sales`.`orders` AS `t`
USING (
  SELECT
    `id`,
    `sku`,
    NOT MAX(`__sd_last_delete`) IS NULL AS `__sd_deleted`,
    NOT MAX(`__sd_first_upsert`) IS NULL AS `__sd_upserted`
  FROM (
    SELECT
      `id`,
      `sku`,
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
      ) OVER (PARTITION BY `id`, `sku`) AS `__sd_first_upsert`
    FROM (
      SELECT
        `id`,
        `sku`,
        `__sd_op`,
        `__sd_seq`,
        MAX(CASE WHEN `__sd_op` = 'delete' THEN `__sd_seq` END) OVER (PARTITION BY `id`, `sku`) AS `__sd_last_delete`
      FROM `lake`.`sales`.`sd__pending__orders`
      WHERE
        `__sd_seq` <= :sd_flush_high
    ) AS `d`
  ) AS `r`
  GROUP BY
    `id`,
    `sku`
) AS `s`
ON `t`.`id` = `s`.`id` AND `t`.`sku` = `s`.`sku`
WHEN MATCHED AND `s`.`__sd_deleted` AND NOT `s`.`__sd_upserted` THEN DELETE
WHEN NOT MATCHED AND `s`.`__sd_upserted` THEN INSERT (`id`, `sku`) VALUES (`s`.`id`, `s`.`sku`)
