SELECT
  MIN(`__sd_seq`) AS `low`,
  MAX(`__sd_seq`) AS `high`,
  COUNT(*) AS `rows`,
  COUNT(DISTINCT `__sd_batch`) AS `batches`,
  MAX(`__sd_batch`) AS `last_batch`
FROM `lake`.`sales`.`sd__pending__orders`
