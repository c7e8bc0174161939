CREATE TABLE `lake`.`sales`.`orders` (
  `id` INT NOT NULL,
  `region` STRING NOT NULL,
  `amount` DECIMAL(10, 2),
  `note` STRING,
  `_fivetran_synced` TIMESTAMP,
  `_fivetran_deleted` BOOLEAN
)
USING ICEBERG
TBLPROPERTIES (
  'format-version'='2',
  'write.delete.mode'='merge-on-read',
  'write.update.mode'='merge-on-read',
  'write.merge.mode'='merge-on-read',
  'write.parquet.row-group-size-bytes'='1048576',
  'write.parquet.bloom-filter-max-bytes'='32768',
  'write.parquet.bloom-filter-enabled.column.id'='true',
  'write.parquet.bloom-filter-enabled.column.region'='true',
  'read.split.open-file-cost'='262144',
  'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"region","primary_key":true,"type":"STRING"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"note","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"}]'
);

ALTER TABLE `lake`.`sales`.`orders` WRITE LOCALLY ORDERED BY `id`, `region`
