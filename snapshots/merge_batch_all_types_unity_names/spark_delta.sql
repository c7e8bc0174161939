MERGE INTO `lake`.`my-schema`.`order-``items``-2024` AS `t`
USING (
  SELECT
    `id`,
    `flag`,
    `small`,
    `count`,
    `amount`,
    `ratio`,
    `score`,
    `day`,
    `local time stamp`,
    `happened.at`,
    `payload`,
    `doc`,
    `name-with-hyphen`,
    `attrs`,
    `at``time`,
    `_fivetran_synced`,
    `_fivetran_deleted`,
    `__sd_unmodified_flag`,
    `__sd_unmodified_small`,
    `__sd_unmodified_count`,
    `__sd_unmodified_amount`,
    `__sd_unmodified_ratio`,
    `__sd_unmodified_score`,
    `__sd_unmodified_day`,
    `__sd_unmodified_local time stamp`,
    `__sd_unmodified_happened.at`,
    `__sd_unmodified_payload`,
    `__sd_unmodified_doc`,
    `__sd_unmodified_name-with-hyphen`,
    `__sd_unmodified_attrs`,
    `__sd_unmodified_at``time`,
    `__sd_unmodified__fivetran_synced`,
    `__sd_unmodified__fivetran_deleted`,
    `__sd_op`
  FROM `sd_batch`
  WHERE
    NOT `__sd_dup`
  UNION ALL
  SELECT
    `id`,
    MAX_BY(`flag`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_flag`) AS `flag`,
    MAX_BY(`small`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_small`) AS `small`,
    MAX_BY(`count`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_count`) AS `count`,
    MAX_BY(`amount`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_amount`) AS `amount`,
    MAX_BY(`ratio`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_ratio`) AS `ratio`,
    MAX_BY(`score`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_score`) AS `score`,
    MAX_BY(`day`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_day`) AS `day`,
    MAX_BY(`local time stamp`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_local time stamp`) AS `local time stamp`,
    MAX_BY(`happened.at`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_happened.at`) AS `happened.at`,
    MAX_BY(`payload`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_payload`) AS `payload`,
    MAX_BY(`doc`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_doc`) AS `doc`,
    MAX_BY(`name-with-hyphen`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_name-with-hyphen`) AS `name-with-hyphen`,
    MAX_BY(`attrs`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_attrs`) AS `attrs`,
    MAX_BY(`at``time`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_at``time`) AS `at``time`,
    MAX_BY(`_fivetran_synced`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_synced`) AS `_fivetran_synced`,
    MAX_BY(`_fivetran_deleted`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_deleted`) AS `_fivetran_deleted`,
    MIN(`__sd_unmodified_flag`) AS `__sd_unmodified_flag`,
    MIN(`__sd_unmodified_small`) AS `__sd_unmodified_small`,
    MIN(`__sd_unmodified_count`) AS `__sd_unmodified_count`,
    MIN(`__sd_unmodified_amount`) AS `__sd_unmodified_amount`,
    MIN(`__sd_unmodified_ratio`) AS `__sd_unmodified_ratio`,
    MIN(`__sd_unmodified_score`) AS `__sd_unmodified_score`,
    MIN(`__sd_unmodified_day`) AS `__sd_unmodified_day`,
    MIN(`__sd_unmodified_local time stamp`) AS `__sd_unmodified_local time stamp`,
    MIN(`__sd_unmodified_happened.at`) AS `__sd_unmodified_happened.at`,
    MIN(`__sd_unmodified_payload`) AS `__sd_unmodified_payload`,
    MIN(`__sd_unmodified_doc`) AS `__sd_unmodified_doc`,
    MIN(`__sd_unmodified_name-with-hyphen`) AS `__sd_unmodified_name-with-hyphen`,
    MIN(`__sd_unmodified_attrs`) AS `__sd_unmodified_attrs`,
    MIN(`__sd_unmodified_at``time`) AS `__sd_unmodified_at``time`,
    MIN(`__sd_unmodified__fivetran_synced`) AS `__sd_unmodified__fivetran_synced`,
    MIN(`__sd_unmodified__fivetran_deleted`) AS `__sd_unmodified__fivetran_deleted`,
    CASE
      WHEN MAX(`__sd_op` = 'delete')
      THEN 'delete'
      WHEN MAX(`__sd_op` = 'upsert')
      THEN 'upsert'
      ELSE 'update'
    END AS `__sd_op`
  FROM (
    SELECT
      `id`,
      `flag`,
      `small`,
      `count`,
      `amount`,
      `ratio`,
      `score`,
      `day`,
      `local time stamp`,
      `happened.at`,
      `payload`,
      `doc`,
      `name-with-hyphen`,
      `attrs`,
      `at``time`,
      `_fivetran_synced`,
      `_fivetran_deleted`,
      `__sd_unmodified_flag`,
      `__sd_unmodified_small`,
      `__sd_unmodified_count`,
      `__sd_unmodified_amount`,
      `__sd_unmodified_ratio`,
      `__sd_unmodified_score`,
      `__sd_unmodified_day`,
      `__sd_unmodified_local time stamp`,
      `__sd_unmodified_happened.at`,
      `__sd_unmodified_payload`,
      `__sd_unmodified_doc`,
      `__sd_unmodified_name-with-hyphen`,
      `__sd_unmodified_attrs`,
      `__sd_unmodified_at``time`,
      `__sd_unmodified__fivetran_synced`,
      `__sd_unmodified__fivetran_deleted`,
      `__sd_op`,
      `__sd_seq`
    FROM `sd_batch`
    WHERE
      `__sd_dup`
  ) AS `b`
  GROUP BY
    `id`
) AS `s`
ON `t`.`id` = `s`.`id`
WHEN MATCHED AND `s`.`__sd_op` = 'delete' THEN DELETE
WHEN MATCHED THEN UPDATE SET
  `t`.`flag` = CASE WHEN `s`.`__sd_unmodified_flag` THEN `t`.`flag` ELSE `s`.`flag` END,
  `t`.`small` = CASE WHEN `s`.`__sd_unmodified_small` THEN `t`.`small` ELSE `s`.`small` END,
  `t`.`count` = CASE WHEN `s`.`__sd_unmodified_count` THEN `t`.`count` ELSE `s`.`count` END,
  `t`.`amount` = CASE WHEN `s`.`__sd_unmodified_amount` THEN `t`.`amount` ELSE `s`.`amount` END,
  `t`.`ratio` = CASE WHEN `s`.`__sd_unmodified_ratio` THEN `t`.`ratio` ELSE `s`.`ratio` END,
  `t`.`score` = CASE WHEN `s`.`__sd_unmodified_score` THEN `t`.`score` ELSE `s`.`score` END,
  `t`.`day` = CASE WHEN `s`.`__sd_unmodified_day` THEN `t`.`day` ELSE `s`.`day` END,
  `t`.`local time stamp` = CASE
    WHEN `s`.`__sd_unmodified_local time stamp`
    THEN `t`.`local time stamp`
    ELSE `s`.`local time stamp`
  END,
  `t`.`happened.at` = CASE
    WHEN `s`.`__sd_unmodified_happened.at`
    THEN `t`.`happened.at`
    ELSE `s`.`happened.at`
  END,
  `t`.`payload` = CASE WHEN `s`.`__sd_unmodified_payload` THEN `t`.`payload` ELSE `s`.`payload` END,
  `t`.`doc` = CASE WHEN `s`.`__sd_unmodified_doc` THEN `t`.`doc` ELSE `s`.`doc` END,
  `t`.`name-with-hyphen` = CASE
    WHEN `s`.`__sd_unmodified_name-with-hyphen`
    THEN `t`.`name-with-hyphen`
    ELSE `s`.`name-with-hyphen`
  END,
  `t`.`attrs` = CASE WHEN `s`.`__sd_unmodified_attrs` THEN `t`.`attrs` ELSE `s`.`attrs` END,
  `t`.`at``time` = CASE WHEN `s`.`__sd_unmodified_at``time` THEN `t`.`at``time` ELSE `s`.`at``time` END,
  `t`.`_fivetran_synced` = CASE
    WHEN `s`.`__sd_unmodified__fivetran_synced`
    THEN `t`.`_fivetran_synced`
    ELSE `s`.`_fivetran_synced`
  END,
  `t`.`_fivetran_deleted` = CASE
    WHEN `s`.`__sd_unmodified__fivetran_deleted`
    THEN `t`.`_fivetran_deleted`
    ELSE `s`.`_fivetran_deleted`
  END
WHEN NOT MATCHED AND `s`.`__sd_op` = 'upsert' THEN INSERT (
  `id`,
  `flag`,
  `small`,
  `count`,
  `amount`,
  `ratio`,
  `score`,
  `day`,
  `local time stamp`,
  `happened.at`,
  `payload`,
  `doc`,
  `name-with-hyphen`,
  `attrs`,
  `at``time`,
  `_fivetran_synced`,
  `_fivetran_deleted`
) VALUES (
  `s`.`id`,
  `s`.`flag`,
  `s`.`small`,
  `s`.`count`,
  `s`.`amount`,
  `s`.`ratio`,
  `s`.`score`,
  `s`.`day`,
  `s`.`local time stamp`,
  `s`.`happened.at`,
  `s`.`payload`,
  `s`.`doc`,
  `s`.`name-with-hyphen`,
  `s`.`attrs`,
  `s`.`at``time`,
  `s`.`_fivetran_synced`,
  `s`.`_fivetran_deleted`
)
