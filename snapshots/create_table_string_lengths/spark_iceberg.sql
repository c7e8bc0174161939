CREATE TABLE `lake`.`sales`.`orders` (
  `id` INT NOT NULL,
  `code` STRING,
  `note` STRING,
  `doc` STRING
)
USING ICEBERG
TBLPROPERTIES (
  'format-version'='2',
  'write.delete.mode'='merge-on-read',
  'write.update.mode'='merge-on-read',
  'write.merge.mode'='merge-on-read',
  'write.parquet.row-group-size-bytes'='4194304'
)
