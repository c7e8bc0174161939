-- 1. set properties of 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"n","type":"SHORT"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"},{"name":"n_renamed","type":"SHORT"}]'
  );

-- 2. rewrite 'orders' with the new columns
CREATE OR REPLACE TABLE `spark_catalog`.`sales`.`orders`
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported'
) AS
SELECT
  COALESCE(`id`, CAST(0 AS INT)) AS `id`,
  `amount` AS `amount`,
  `n` AS `n_renamed`,
  `desc` AS `desc`,
  `_fivetran_synced` AS `_fivetran_synced`,
  `_fivetran_deleted` AS `_fivetran_deleted`
FROM `spark_catalog`.`sales`.`orders`;

-- 3. set properties of 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"n_renamed","type":"SHORT"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"}]'
  );
