-- 1. set identifier fields of 'orders_new'
ALTER TABLE `lake`.`sales`.`orders_new` SET IDENTIFIER FIELDS `id`;

-- 2. copy the rows of 'orders' into 'orders_new'
INSERT OVERWRITE TABLE `lake`.`sales`.`orders_new`
SELECT
  `id`,
  `amount`,
  `n`,
  `desc`,
  `_fivetran_synced`,
  `_fivetran_deleted`
FROM `lake`.`sales`.`orders`;

-- 3. drop table 'orders'
DROP TABLE IF EXISTS `lake`.`sales`.`orders`;
