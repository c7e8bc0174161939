ALTER TABLE `lake`.`my-schema.v2`.`order ``items`` 2024`
DROP PRIMARY KEY IF EXISTS;

ALTER TABLE `lake`.`my-schema.v2`.`order ``items`` 2024`
ADD CONSTRAINT `order ``items`` 2024_pk` PRIMARY KEY (`id`, `at``time`)
