-- 1. set properties of 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"n","type":"SHORT"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"},{"name":"n_renamed","type":"SHORT"}]'
  );

-- 2. rename column 'n' of 'orders' to 'n_renamed'
ALTER TABLE `spark_catalog`.`sales`.`orders`
RENAME COLUMN `n` TO `n_renamed`;

-- 3. set properties of 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"n_renamed","type":"SHORT"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"}]'
  );
