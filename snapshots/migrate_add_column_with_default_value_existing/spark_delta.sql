-- 1. check the value for column 'n'
SELECT
  TRY_CAST('7' AS SMALLINT) IS NULL AS `__sd_bad`;

-- 2. set column 'n' of 'orders'
UPDATE `spark_catalog`.`sales`.`orders` SET `n` = CAST('7' AS SMALLINT);
