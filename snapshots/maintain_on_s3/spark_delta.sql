-- 1. compact the data files of 'order_items_2024', clustered by 'id', 'at`time'
OPTIMIZE `lake`.`my_schema_v2`.`order_items_2024` ZORDER BY (`id`, `at``time`);

-- 2. delete the files of 'order_items_2024' no version of the last 168 hours references
VACUUM `lake`.`my_schema_v2`.`order_items_2024` RETAIN 168 HOURS;
