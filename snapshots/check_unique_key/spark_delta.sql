SELECT
  COUNT(*) AS `__sd_duplicate_keys`
FROM (
  SELECT
    1
  FROM `lake`.`sales`.`orders`
  GROUP BY
    `id`,
    CAST(`code` AS INT)
  HAVING
    COUNT(*) > 1
)
