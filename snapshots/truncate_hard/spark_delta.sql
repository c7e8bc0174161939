DELETE FROM `lake`.`sales`.`orders`
WHERE
  `_fivetran_synced` < CAST('2024-05-17 08:30:12.345000' AS TIMESTAMP)
