-- 1. check the value for column 'operation_time'
SELECT
  TRY_CAST('2005-05-28T20:57:00Z' AS TIMESTAMP) IS NULL AS `__sd_bad`;

-- 2. set properties of 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"n","type":"SHORT"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"},{"name":"operation_time","type":"UTC_DATETIME"}]'
  );

-- 3. add 1 column(s) to 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
ADD COLUMNS (
  `operation_time` TIMESTAMP
);

-- 4. set column 'operation_time' of 'orders'
UPDATE `spark_catalog`.`sales`.`orders` SET `operation_time` = CAST('2005-05-28T20:57:00Z' AS TIMESTAMP);
