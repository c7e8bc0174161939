CREATE TABLE `lake`.`sales`.`orders` (
  `id` INT NOT NULL,
  `code` STRING,
  `note` STRING,
  `doc` STRING
)
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported'
)
