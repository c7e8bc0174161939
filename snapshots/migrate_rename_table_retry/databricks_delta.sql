-- 1. drop the primary key of 'orders_new' if any
ALTER TABLE `lake`.`sales`.`orders_new`
DROP PRIMARY KEY IF EXISTS;

-- 2. make key column 'id' of 'orders_new' NOT NULL
ALTER TABLE `lake`.`sales`.`orders_new`
ALTER COLUMN `id` SET NOT NULL;

-- 3. set the primary key of 'orders_new'
ALTER TABLE `lake`.`sales`.`orders_new`
ADD CONSTRAINT `orders_new_pk` PRIMARY KEY (`id`);

-- 4. copy the rows of 'orders' into 'orders_new'
INSERT OVERWRITE TABLE `lake`.`sales`.`orders_new`
SELECT
  `id`,
  `amount`,
  `n`,
  `desc`,
  `_fivetran_synced`,
  `_fivetran_deleted`
FROM `lake`.`sales`.`orders`;

-- 5. drop table 'orders'
DROP TABLE IF EXISTS `lake`.`sales`.`orders`;
