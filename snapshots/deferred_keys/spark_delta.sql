SELECT DISTINCT
  `id`,
  `region`
FROM `lake`.`sales`.`sd__pending__orders`
WHERE
  `__sd_seq` <= :sd_flush_high
LIMIT 5
