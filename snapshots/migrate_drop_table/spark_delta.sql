-- 1. drop table 'orders'
DROP TABLE IF EXISTS `lake`.`sales`.`orders`;
