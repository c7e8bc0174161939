ALTER TABLE `lake`.`sales`.`orders`
DROP PRIMARY KEY IF EXISTS;

ALTER TABLE `lake`.`sales`.`orders`
ALTER COLUMN `id` SET NOT NULL;

ALTER TABLE `lake`.`sales`.`orders`
ADD CONSTRAINT `orders_pk` PRIMARY KEY (`id`)
