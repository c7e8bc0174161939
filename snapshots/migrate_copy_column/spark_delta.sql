-- 1. set properties of 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"n","type":"SHORT"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"},{"name":"n_copy","type":"SHORT"}]'
  );

-- 2. add 1 column(s) to 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
ADD COLUMNS (
  `n_copy` SMALLINT
);

-- 3. set column 'n_copy' of 'orders'
UPDATE `spark_catalog`.`sales`.`orders` SET `n_copy` = `n`;
