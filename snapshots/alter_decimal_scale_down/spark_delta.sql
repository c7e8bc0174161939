-- 1. check the stored values of 'orders' convert
SELECT
  COUNT_IF(NOT `amount` IS NULL AND TRY_CAST(`amount` AS DECIMAL(20, 2)) IS NULL) AS `bad_count_0`,
  MIN(
    CASE
      WHEN NOT `amount` IS NULL AND TRY_CAST(`amount` AS DECIMAL(20, 2)) IS NULL
      THEN CAST(`amount` AS STRING)
    END
  ) AS `bad_value_0`
FROM `lake`.`sales`.`orders`;

-- 2. rewrite 'orders' with the new columns
CREATE OR REPLACE TABLE `lake`.`sales`.`orders`
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported'
) AS
SELECT
  COALESCE(`id`, CAST(0 AS INT)) AS `id`,
  CAST(`amount` AS DECIMAL(20, 2)) AS `amount`
FROM `lake`.`sales`.`orders`;

-- 3. set properties of 'orders'
ALTER TABLE `lake`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":20,"scale":2,"type":"DECIMAL"}]'
  );
