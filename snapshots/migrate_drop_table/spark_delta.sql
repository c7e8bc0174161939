-- 1. drop table 'orders'
DROP TABLE IF EXISTS `spark_catalog`.`sales`.`orders`;
