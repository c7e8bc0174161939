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
USING ICEBERG
TBLPROPERTIES (
  'write.delete.mode'='merge-on-read',
  'write.update.mode'='merge-on-read',
  'write.merge.mode'='merge-on-read',
  'write.parquet.row-group-size-bytes'='4194304'
) AS
SELECT
  COALESCE(`id`, CAST(0 AS INT)) AS `id`,
  CAST(`amount` AS DECIMAL(20, 2)) AS `amount`
FROM `lake`.`sales`.`orders`;

-- 3. set identifier fields of 'orders'
ALTER TABLE `lake`.`sales`.`orders` SET IDENTIFIER FIELDS `id`;

-- 4. set properties of 'orders'
ALTER TABLE `lake`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":20,"scale":2,"type":"DECIMAL"}]'
  );
