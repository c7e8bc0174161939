-- 1. compact the data files of 'order-`items`-2024', clustered by 'id', 'at`time'
OPTIMIZE `lake`.`my-schema`.`order-``items``-2024` ZORDER BY (`id`, `at``time`);

-- 2. delete the files of 'order-`items`-2024' no version of the last 168 hours references
VACUUM `lake`.`my-schema`.`order-``items``-2024` RETAIN 168 HOURS;
