INSERT INTO `lake`.`sales`.`sd__pending__orders` (
  `id`,
  `region`,
  `amount`,
  `note`,
  `_fivetran_synced`,
  `_fivetran_deleted`,
  `__sd_unmodified_amount`,
  `__sd_unmodified_note`,
  `__sd_unmodified__fivetran_synced`,
  `__sd_unmodified__fivetran_deleted`,
  `__sd_op`,
  `__sd_seq`,
  `__sd_batch`
)
SELECT
  `id`,
  `region`,
  `amount`,
  CAST(NULL AS STRING) AS `note`,
  `_fivetran_synced`,
  `_fivetran_deleted`,
  `__sd_unmodified_amount`,
  TRUE AS `__sd_unmodified_note`,
  `__sd_unmodified__fivetran_synced`,
  `__sd_unmodified__fivetran_deleted`,
  `__sd_op`,
  :sd_seq_base + `__sd_seq` AS `__sd_seq`,
  :sd_batch_number AS `__sd_batch`
FROM `sd_batch`
