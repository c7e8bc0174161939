-- 1. set column 'desc' of 'orders'
UPDATE `lake`.`sales`.`orders` SET `desc` = CAST(NULL AS STRING);
