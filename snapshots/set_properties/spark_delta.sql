ALTER TABLE `lake`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"region","primary_key":true,"type":"STRING"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"note","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"}]'
  )
