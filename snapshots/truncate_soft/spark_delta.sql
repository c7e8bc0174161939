UPDATE `lake`.`sales`.`orders` SET `_fivetran_deleted` = TRUE
WHERE
  `_fivetran_synced` < CAST('2024-05-17 08:30:12.345000' AS TIMESTAMP)
  AND NOT COALESCE(`_fivetran_deleted`, FALSE)
