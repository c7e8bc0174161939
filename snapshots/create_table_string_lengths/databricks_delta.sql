CREATE TABLE `lake`.`sales`.`orders` (
  `id` INT NOT NULL,
  `code` VARCHAR(12),
  `note` STRING,
  `doc` STRING
)
USING DELTA
TBLPROPERTIES (
  'delta.columnMapping.mode'='name',
  'delta.enableDeletionVectors'='true',
  'delta.enableTypeWidening'='true',
  'delta.feature.timestampNtz'='supported'
)
