SELECT DISTINCT
  `id`,
  `region`
FROM `lake`.`sales`.`__sd_pending_orders`
WHERE
  `__sd_seq` <= :sd_flush_high
LIMIT 5
