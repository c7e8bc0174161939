-- 1. create table 'orders_history'
CREATE TABLE `spark_catalog`.`sales`.`orders_history` (
  `id` INT NOT NULL,
  `amount` DECIMAL(10, 2),
  `n` SMALLINT,
  `desc` STRING,
  `_fivetran_synced` TIMESTAMP,
  `_fivetran_start` TIMESTAMP NOT NULL,
  `_fivetran_end` TIMESTAMP,
  `_fivetran_active` BOOLEAN
)
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported',
  'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"n","type":"SHORT"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_start","primary_key":true,"type":"UTC_DATETIME"},{"name":"_fivetran_end","type":"UTC_DATETIME"},{"name":"_fivetran_active","type":"BOOLEAN"}]'
);

-- 2. copy the rows of 'orders' into history table 'orders_history'
INSERT OVERWRITE TABLE `spark_catalog`.`sales`.`orders_history`
SELECT
  `s`.`id`,
  `s`.`amount`,
  `s`.`n`,
  `s`.`desc`,
  `s`.`_fivetran_synced`,
  CASE
    WHEN COALESCE(`s`.`_fivetran_deleted`, FALSE)
    THEN CAST('0001-01-01 00:00:00' AS TIMESTAMP)
    ELSE `m`.`__sd_latest`
  END AS `_fivetran_start`,
  CASE
    WHEN COALESCE(`s`.`_fivetran_deleted`, FALSE)
    THEN CAST('0001-01-01 00:00:00' AS TIMESTAMP)
    ELSE CAST('9999-12-31 23:59:59.999' AS TIMESTAMP)
  END AS `_fivetran_end`,
  NOT COALESCE(`s`.`_fivetran_deleted`, FALSE) AS `_fivetran_active`
FROM `spark_catalog`.`sales`.`orders` AS `s`
CROSS JOIN (
  SELECT
    COALESCE(MAX(`_fivetran_synced`), CURRENT_TIMESTAMP()) AS `__sd_latest`
  FROM `spark_catalog`.`sales`.`orders`
) AS `m`;
