CREATE TABLE `lake`.`sales`.`orders` (
  `id` INT NOT NULL,
  `code` STRING,
  `note` STRING,
  `doc` STRING
)
USING DELTA
TBLPROPERTIES (
  'delta.columnMapping.mode'='name',
  'delta.enableDeletionVectors'='true',
  'delta.feature.timestampNtz'='supported'
)
