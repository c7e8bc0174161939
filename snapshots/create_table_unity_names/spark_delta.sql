CREATE TABLE `lake`.`my-schema`.`order-``items``-2024` (
  `id` BIGINT NOT NULL,
  `flag` BOOLEAN,
  `small` SMALLINT,
  `count` INT,
  `amount` DECIMAL(18, 4),
  `ratio` FLOAT,
  `score` DOUBLE,
  `day` DATE,
  `local time stamp` TIMESTAMP_NTZ,
  `happened.at` TIMESTAMP,
  `payload` BINARY,
  `doc` STRING,
  `name-with-hyphen` STRING,
  `attrs` STRING,
  `at``time` STRING,
  `_fivetran_synced` TIMESTAMP,
  `_fivetran_deleted` BOOLEAN
)
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported',
  'delta.columnMapping.mode'='name',
  'fivetran.columns'='[{"name":"id","primary_key":true,"type":"LONG"},{"name":"flag","type":"BOOLEAN"},{"name":"small","type":"SHORT"}]'
)
