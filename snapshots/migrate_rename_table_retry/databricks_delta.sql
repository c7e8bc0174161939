-- 1. drop the primary key of 'orders_new' if any
ALTER TABLE `lake`.`sales`.`orders_new`
DROP PRIMARY KEY IF EXISTS;

-- 2. set the primary key of 'orders_new'
ALTER TABLE `lake`.`sales`.`orders_new`
ADD CONSTRAINT `orders_new_pk` PRIMARY KEY (`id`);

-- 3. copy the rows of 'orders' into 'orders_new'
INSERT OVERWRITE TABLE `lake`.`sales`.`orders_new`
SELECT
  `id`,
  `amount`,
  `n`,
  `desc`,
  `_fivetran_synced`,
  `_fivetran_deleted`
FROM `lake`.`sales`.`orders`;

-- 4. drop table 'orders'
DROP TABLE IF EXISTS `lake`.`sales`.`orders`;
