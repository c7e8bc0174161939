-- 1. compact data files and apply delete files of 'order `items` 2024'
CALL `lake`.`system`.`rewrite_data_files`(
  `table` => '`my-schema.v2`.`order ``items`` 2024`',
  `options` => map('delete-file-threshold', '1', 'remove-dangling-deletes', 'true')
);

-- 2. compact position-delete files of 'order `items` 2024'
CALL `lake`.`system`.`rewrite_position_delete_files`(
  `table` => '`my-schema.v2`.`order ``items`` 2024`',
  `options` => map('rewrite-all', 'true')
);

-- 3. expire snapshots older than 2024-05-10T08:30:12.345678+00:00 (keep the last 1) of 'order `items` 2024'
CALL `lake`.`system`.`expire_snapshots`(
  `table` => '`my-schema.v2`.`order ``items`` 2024`',
  `older_than` => TIMESTAMP '2024-05-10 08:30:12.345678',
  `retain_last` => 1
);

-- 4. remove unreferenced files older than 2024-05-10T08:30:12.345678+00:00 of 'order `items` 2024'
CALL `lake`.`system`.`remove_orphan_files`(
  `table` => '`my-schema.v2`.`order ``items`` 2024`',
  `older_than` => TIMESTAMP '2024-05-10 08:30:12.345678',
  `prefix_listing` => TRUE
);
