ALTER TABLE `lake`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'format-version'='3',
    'write.parquet.row-group-size-bytes'='1048576',
    'write.parquet.bloom-filter-max-bytes'='32768',
    'write.parquet.bloom-filter-enabled.column.id'='true',
    'write.parquet.bloom-filter-enabled.column.region'='true'
  );

ALTER TABLE `lake`.`sales`.`orders` WRITE LOCALLY ORDERED BY `id`, `region`;

ALTER TABLE `lake`.`sales`.`orders` ADD PARTITION FIELD BUCKET(16, `id`)
