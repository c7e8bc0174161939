ALTER TABLE `lake`.`my-schema`.`order-``items``-2024`
DROP PRIMARY KEY IF EXISTS;

ALTER TABLE `lake`.`my-schema`.`order-``items``-2024`
ALTER COLUMN `id` SET NOT NULL;

ALTER TABLE `lake`.`my-schema`.`order-``items``-2024`
ALTER COLUMN `at``time` SET NOT NULL;

ALTER TABLE `lake`.`my-schema`.`order-``items``-2024`
ADD CONSTRAINT `order-``items``-2024_pk` PRIMARY KEY (`id`, `at``time`)
