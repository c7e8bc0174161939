UPDATE `lake`.`sales`.`orders_history` SET `_fivetran_end` = CAST('2024-05-17 08:30:12.345000' AS TIMESTAMP), `_fivetran_active` = FALSE
WHERE
  `_fivetran_synced` < CAST('2024-05-17 08:30:12.345000' AS TIMESTAMP)
  AND `_fivetran_active`
