-- 1. check the value for column 'amount'
SELECT
  TRY_CAST('202.57' AS DECIMAL(10, 2)) IS NULL AS `__sd_bad`;

-- 2. set column 'amount' of 'orders'
UPDATE `spark_catalog`.`sales`.`orders` SET `amount` = CAST('202.57' AS DECIMAL(10, 2));
