-- 1. rewrite 'orders' as a history-mode table
CREATE OR REPLACE TABLE `spark_catalog`.`sales`.`orders`
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported'
) AS
SELECT
  `s`.`id`,
  `s`.`amount`,
  `s`.`n`,
  `s`.`desc`,
  `s`.`_fivetran_synced`,
  `s`.`is_gone`,
  COALESCE(
    CASE
      WHEN COALESCE(`s`.`is_gone`, FALSE)
      THEN CAST('0001-01-01 00:00:00' AS TIMESTAMP)
      ELSE `m`.`__sd_latest`
    END,
    CAST(0 AS TIMESTAMP)
  ) AS `_fivetran_start`,
  CASE
    WHEN COALESCE(`s`.`is_gone`, FALSE)
    THEN CAST('0001-01-01 00:00:00' AS TIMESTAMP)
    ELSE CAST('9999-12-31 23:59:59.999' AS TIMESTAMP)
  END AS `_fivetran_end`,
  NOT COALESCE(`s`.`is_gone`, FALSE) AS `_fivetran_active`
FROM `spark_catalog`.`sales`.`orders` AS `s`
CROSS JOIN (
  SELECT
    COALESCE(MAX(`_fivetran_synced`), CURRENT_TIMESTAMP()) AS `__sd_latest`
  FROM `spark_catalog`.`sales`.`orders`
) AS `m`;

-- 2. make column '_fivetran_end' of 'orders' nullable
ALTER TABLE `spark_catalog`.`sales`.`orders`
ALTER COLUMN `_fivetran_end` DROP NOT NULL;

-- 3. make column '_fivetran_active' of 'orders' nullable
ALTER TABLE `spark_catalog`.`sales`.`orders`
ALTER COLUMN `_fivetran_active` DROP NOT NULL;

-- 4. set properties of 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"n","type":"SHORT"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"is_gone","type":"BOOLEAN"},{"name":"_fivetran_start","primary_key":true,"type":"UTC_DATETIME"},{"name":"_fivetran_end","type":"UTC_DATETIME"},{"name":"_fivetran_active","type":"BOOLEAN"}]'
  );
