-- 1. check the value for column 'extra'
SELECT
  TRY_CAST('7' AS INT) IS NULL AS `__sd_bad`;

-- 2. check no active version of 'orders' starts later
SELECT
  MAX(`_fivetran_start`) AS `__sd_latest`
FROM `spark_catalog`.`sales`.`orders`
WHERE
  `_fivetran_active`
  AND `_fivetran_start` > CAST('2005-05-28 20:57:00.000000' AS TIMESTAMP);

-- 3. set properties of 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"region","primary_key":true,"type":"STRING"},{"name":"amount","type":"DOUBLE"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_start","primary_key":true,"type":"UTC_DATETIME"},{"name":"_fivetran_end","type":"UTC_DATETIME"},{"name":"_fivetran_active","type":"BOOLEAN"},{"name":"extra","type":"INT"}]'
  );

-- 4. add 1 column(s) to 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
ADD COLUMNS (
  `extra` INT
);

-- 5. record the change of column 'extra' as history of 'orders'
MERGE INTO `spark_catalog`.`sales`.`orders` AS `t`
USING (
  SELECT
    `id`,
    `region`,
    `amount`,
    `desc`,
    `_fivetran_synced`,
    CAST('2005-05-28 20:57:00.000000' AS TIMESTAMP) AS `_fivetran_start`,
    `_fivetran_end`,
    `_fivetran_active`,
    CAST('7' AS INT) AS `extra`,
    'insert' AS `__sd_action`
  FROM `spark_catalog`.`sales`.`orders`
  WHERE
    `_fivetran_active`
    AND `_fivetran_start` < CAST('2005-05-28 20:57:00.000000' AS TIMESTAMP)
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
    `extra`,
    CASE
      WHEN `_fivetran_start` = CAST('2005-05-28 20:57:00.000000' AS TIMESTAMP)
      THEN 'fix'
      ELSE 'close'
    END AS `__sd_action`
  FROM `spark_catalog`.`sales`.`orders`
  WHERE
    (
      `_fivetran_active`
      AND `_fivetran_start` < CAST('2005-05-28 20:57:00.000000' AS TIMESTAMP)
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
  `t`.`extra` = CAST('7' AS INT)
WHEN NOT MATCHED AND `s`.`__sd_action` = 'insert' THEN INSERT (
  `id`,
  `region`,
  `amount`,
  `desc`,
  `_fivetran_synced`,
  `_fivetran_start`,
  `_fivetran_end`,
  `_fivetran_active`,
  `extra`
) VALUES (
  `s`.`id`,
  `s`.`region`,
  `s`.`amount`,
  `s`.`desc`,
  `s`.`_fivetran_synced`,
  `s`.`_fivetran_start`,
  `s`.`_fivetran_end`,
  `s`.`_fivetran_active`,
  `s`.`extra`
);
