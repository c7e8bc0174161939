-- 1. widen column 'amount' of 'orders' to DECIMAL(22, 6)
ALTER TABLE `lake`.`sales`.`orders`
ALTER COLUMN `amount` TYPE DECIMAL(22, 6);

-- 2. set properties of 'orders'
ALTER TABLE `lake`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":22,"scale":6,"type":"DECIMAL"}]'
  );
