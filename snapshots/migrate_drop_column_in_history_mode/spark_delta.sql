-- 1. check no active version of 'orders' starts later
SELECT
  MAX(`_fivetran_start`) AS `__sd_latest`
FROM `spark_catalog`.`sales`.`orders`
WHERE
  `_fivetran_active`
  AND `_fivetran_start` > CAST('2005-05-28 20:57:00.000000' AS TIMESTAMP);

-- 2. record the change of column 'desc' as history of 'orders'
MERGE INTO `spark_catalog`.`sales`.`orders` AS `t`
USING (
  SELECT
    `id`,
    `region`,
    `amount`,
    CAST(NULL AS STRING) AS `desc`,
    `_fivetran_synced`,
    CAST('2005-05-28 20:57:00.000000' AS TIMESTAMP) AS `_fivetran_start`,
    `_fivetran_end`,
    `_fivetran_active`,
    'insert' AS `__sd_action`
  FROM `spark_catalog`.`sales`.`orders`
  WHERE
    (
      `_fivetran_active`
      AND `_fivetran_start` < CAST('2005-05-28 20:57:00.000000' AS TIMESTAMP)
    )
    AND NOT `desc` IS NULL
  UNION ALL
  SELECT
    `id`,
    `region`,
    `amount`,
    `desc`,
    `_fivetran_synced`,
    `_fivetran_start`,
    `_fivetran_end`,
    `_fivetran_active`,
    CASE
      WHEN `_fivetran_start` = CAST('2005-05-28 20:57:00.000000' AS TIMESTAMP)
      THEN 'fix'
      ELSE 'close'
    END AS `__sd_action`
  FROM `spark_catalog`.`sales`.`orders`
  WHERE
    (
      (
        `_fivetran_active`
        AND `_fivetran_start` < CAST('2005-05-28 20:57:00.000000' AS TIMESTAMP)
      )
      AND NOT `desc` IS NULL
    )
    OR `_fivetran_start` = CAST('2005-05-28 20:57:00.000000' AS TIMESTAMP)
) AS `s`
ON (
  `t`.`id` = `s`.`id`
  AND `t`.`region` = `s`.`region`
  AND `t`.`_fivetran_start` = `s`.`_fivetran_start`
)
AND `s`.`__sd_action` <> 'insert'
WHEN MATCHED AND `s`.`__sd_action` = 'close' THEN UPDATE SET
  `t`.`_fivetran_end` = CAST('2005-05-28 20:56:59.999000' AS TIMESTAMP),
  `t`.`_fivetran_active` = FALSE
WHEN MATCHED THEN UPDATE SET
  `t`.`desc` = CAST(NULL AS STRING)
WHEN NOT MATCHED AND `s`.`__sd_action` = 'insert' THEN INSERT (
  `id`,
  `region`,
  `amount`,
  `desc`,
  `_fivetran_synced`,
  `_fivetran_start`,
  `_fivetran_end`,
  `_fivetran_active`
) VALUES (
  `s`.`id`,
  `s`.`region`,
  `s`.`amount`,
  `s`.`desc`,
  `s`.`_fivetran_synced`,
  `s`.`_fivetran_start`,
  `s`.`_fivetran_end`,
  `s`.`_fivetran_active`
);
