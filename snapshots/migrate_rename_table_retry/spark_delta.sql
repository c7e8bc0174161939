-- 1. copy the rows of 'orders' into 'orders_new'
INSERT OVERWRITE TABLE `spark_catalog`.`sales`.`orders_new`
SELECT
  `id`,
  `amount`,
  `n`,
  `desc`,
  `_fivetran_synced`,
  `_fivetran_deleted`
FROM `spark_catalog`.`sales`.`orders`;

-- 2. drop table 'orders'
DROP TABLE IF EXISTS `spark_catalog`.`sales`.`orders`;
