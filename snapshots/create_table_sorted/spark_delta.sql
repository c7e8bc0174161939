CREATE TABLE `lake`.`sales`.`orders` (
  `id` INT NOT NULL,
  `region` STRING NOT NULL,
  `amount` DECIMAL(10, 2),
  `note` STRING,
  `_fivetran_synced` TIMESTAMP,
  `_fivetran_deleted` BOOLEAN
)
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported',
  'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"region","primary_key":true,"type":"STRING"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"note","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"}]'
)
