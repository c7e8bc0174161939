-- 1. set column 'desc' of 'orders'
UPDATE `spark_catalog`.`sales`.`orders` SET `desc` = CAST(NULL AS STRING);
