-- 1. set the layout properties of 'order `items` 2024'
ALTER TABLE `lake`.`my-schema.v2`.`order ``items`` 2024`
  SET 
  TBLPROPERTIES (
    'write.parquet.row-group-size-bytes'='1048576',
    'write.parquet.bloom-filter-max-bytes'='32768',
    'write.parquet.bloom-filter-enabled.column.at`time'='true',
    'write.parquet.bloom-filter-enabled.column.id'='true'
  );

-- 2. sort the rows of each file written to 'order `items` 2024' by 'id', 'at`time'
ALTER TABLE `lake`.`my-schema.v2`.`order ``items`` 2024` WRITE LOCALLY ORDERED BY `id`, `at``time`;

-- 3. compact data files and apply delete files of 'order `items` 2024'
CALL `lake`.`system`.`rewrite_data_files`(
  `table` => '`my-schema.v2`.`order ``items`` 2024`',
  `strategy` => 'sort',
  `options` => map('min-file-size-bytes', '33554432', 'min-input-files', '2', 'delete-ratio-threshold', '0.3', 'remove-dangling-deletes', 'true', 'rewrite-all', 'true')
);

-- 4. compact position-delete files of 'order `items` 2024'
CALL `lake`.`system`.`rewrite_position_delete_files`(
  `table` => '`my-schema.v2`.`order ``items`` 2024`',
  `options` => map('rewrite-all', 'true')
);

-- 5. expire snapshots older than 2024-05-10T08:30:12.345678+00:00 (keep the last 1) of 'order `items` 2024'
CALL `lake`.`system`.`expire_snapshots`(
  `table` => '`my-schema.v2`.`order ``items`` 2024`',
  `older_than` => TIMESTAMP '2024-05-10 08:30:12.345678',
  `retain_last` => 1
);

-- 6. remove unreferenced files older than 2024-05-10T08:30:12.345678+00:00 of 'order `items` 2024'
CALL `lake`.`system`.`remove_orphan_files`(
  `table` => '`my-schema.v2`.`order ``items`` 2024`',
  `older_than` => TIMESTAMP '2024-05-10 08:30:12.345678'
);
