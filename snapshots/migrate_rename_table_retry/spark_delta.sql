-- 1. copy the rows of 'orders' into 'orders_new'
INSERT OVERWRITE TABLE `lake`.`sales`.`orders_new`
SELECT
  `id`,
  `amount`,
  `n`,
  `desc`,
  `_fivetran_synced`,
  `_fivetran_deleted`
FROM `lake`.`sales`.`orders`;

-- 2. drop table 'orders'
DROP TABLE IF EXISTS `lake`.`sales`.`orders`;
