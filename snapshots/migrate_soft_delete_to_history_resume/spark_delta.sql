-- 1. make column '_fivetran_end' of 'orders' nullable
ALTER TABLE `spark_catalog`.`sales`.`orders`
ALTER COLUMN `_fivetran_end` DROP NOT NULL;

-- 2. make column '_fivetran_active' of 'orders' nullable
ALTER TABLE `spark_catalog`.`sales`.`orders`
ALTER COLUMN `_fivetran_active` DROP NOT NULL;

-- 3. set properties of 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"region","primary_key":true,"type":"STRING"},{"name":"amount","type":"DOUBLE"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_start","primary_key":true,"type":"UTC_DATETIME"},{"name":"_fivetran_end","type":"UTC_DATETIME"},{"name":"_fivetran_active","type":"BOOLEAN"}]'
  );
