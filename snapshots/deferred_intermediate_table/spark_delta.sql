CREATE TABLE `lake`.`sales`.`sd__pending__orders` (
  `id` INT NOT NULL,
  `region` STRING NOT NULL,
  `amount` DECIMAL(10, 2),
  `note` STRING,
  `_fivetran_synced` TIMESTAMP,
  `_fivetran_deleted` BOOLEAN,
  `__sd_unmodified_amount` BOOLEAN,
  `__sd_unmodified_note` BOOLEAN,
  `__sd_unmodified__fivetran_synced` BOOLEAN,
  `__sd_unmodified__fivetran_deleted` BOOLEAN,
  `__sd_op` STRING,
  `__sd_seq` BIGINT,
  `__sd_batch` BIGINT
)
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported',
  'spark_destination.pending-layout'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"region","primary_key":true,"type":"STRING"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"note","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"},{"name":"__sd_unmodified_amount","type":"BOOLEAN"},{"name":"__sd_unmodified_note","type":"BOOLEAN"},{"name":"__sd_unmodified__fivetran_synced","type":"BOOLEAN"},{"name":"__sd_unmodified__fivetran_deleted","type":"BOOLEAN"},{"name":"__sd_op","type":"STRING"},{"name":"__sd_seq","type":"LONG"},{"name":"__sd_batch","type":"LONG"}]'
)
