MERGE INTO `lake`.`sales`.`all_types` AS `t`
USING (
  SELECT
    `id`,
    NOT MAX(`__sd_last_delete`) IS NULL AS `__sd_deleted`,
    NOT MAX(`__sd_first_upsert`) IS NULL AS `__sd_upserted`,
    MAX_BY(`flag`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_flag`) AS `flag`,
    MIN(`__sd_unmodified_flag`) AS `__sd_unmodified_flag`,
    MAX_BY(`flag`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_flag` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_flag`,
    MAX_BY(`small`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_small`) AS `small`,
    MIN(`__sd_unmodified_small`) AS `__sd_unmodified_small`,
    MAX_BY(`small`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_small` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_small`,
    MAX_BY(`count`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_count`) AS `count`,
    MIN(`__sd_unmodified_count`) AS `__sd_unmodified_count`,
    MAX_BY(`count`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_count` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_count`,
    MAX_BY(`amount`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_amount`) AS `amount`,
    MIN(`__sd_unmodified_amount`) AS `__sd_unmodified_amount`,
    MAX_BY(`amount`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_amount` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_amount`,
    MAX_BY(`ratio`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_ratio`) AS `ratio`,
    MIN(`__sd_unmodified_ratio`) AS `__sd_unmodified_ratio`,
    MAX_BY(`ratio`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_ratio` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_ratio`,
    MAX_BY(`score`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_score`) AS `score`,
    MIN(`__sd_unmodified_score`) AS `__sd_unmodified_score`,
    MAX_BY(`score`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_score` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_score`,
    MAX_BY(`day`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_day`) AS `day`,
    MIN(`__sd_unmodified_day`) AS `__sd_unmodified_day`,
    MAX_BY(`day`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_day` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_day`,
    MAX_BY(`local time stamp`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_local time stamp`) AS `local time stamp`,
    MIN(`__sd_unmodified_local time stamp`) AS `__sd_unmodified_local time stamp`,
    MAX_BY(`local time stamp`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_local time stamp` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_local time stamp`,
    MAX_BY(`happened.at`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_happened.at`) AS `happened.at`,
    MIN(`__sd_unmodified_happened.at`) AS `__sd_unmodified_happened.at`,
    MAX_BY(`happened.at`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_happened.at` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_happened.at`,
    MAX_BY(`payload`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_payload`) AS `payload`,
    MIN(`__sd_unmodified_payload`) AS `__sd_unmodified_payload`,
    MAX_BY(`payload`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_payload` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_payload`,
    MAX_BY(`doc`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_doc`) AS `doc`,
    MIN(`__sd_unmodified_doc`) AS `__sd_unmodified_doc`,
    MAX_BY(`doc`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_doc` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_doc`,
    MAX_BY(`name-with-hyphen`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_name-with-hyphen`) AS `name-with-hyphen`,
    MIN(`__sd_unmodified_name-with-hyphen`) AS `__sd_unmodified_name-with-hyphen`,
    MAX_BY(`name-with-hyphen`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_name-with-hyphen` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_name-with-hyphen`,
    MAX_BY(`attrs`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_attrs`) AS `attrs`,
    MIN(`__sd_unmodified_attrs`) AS `__sd_unmodified_attrs`,
    MAX_BY(`attrs`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_attrs` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_attrs`,
    MAX_BY(`at``time`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_at``time`) AS `at``time`,
    MIN(`__sd_unmodified_at``time`) AS `__sd_unmodified_at``time`,
    MAX_BY(`at``time`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_at``time` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced_at``time`,
    MAX_BY(`_fivetran_synced`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_synced`) AS `_fivetran_synced`,
    MIN(`__sd_unmodified__fivetran_synced`) AS `__sd_unmodified__fivetran_synced`,
    MAX_BY(`_fivetran_synced`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_synced` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced__fivetran_synced`,
    MAX_BY(`_fivetran_deleted`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_deleted`) AS `_fivetran_deleted`,
    MIN(`__sd_unmodified__fivetran_deleted`) AS `__sd_unmodified__fivetran_deleted`,
    MAX_BY(`_fivetran_deleted`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_deleted` AND `__sd_seq` >= `__sd_first_upsert`) AS `__sd_replaced__fivetran_deleted`
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
      `__sd_seq`,
      `__sd_last_delete`,
      MIN(
        CASE
          WHEN `__sd_op` = 'upsert'
          AND (
            `__sd_last_delete` IS NULL OR `__sd_seq` > `__sd_last_delete`
          )
          THEN `__sd_seq`
        END
      ) OVER (PARTITION BY `id`) AS `__sd_first_upsert`
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
        `__sd_seq`,
        MAX(CASE WHEN `__sd_op` = 'delete' THEN `__sd_seq` END) OVER (PARTITION BY `id`) AS `__sd_last_delete`
      FROM `lake`.`sales`.`sd__pending__all_types`
      WHERE
        `__sd_seq` <= :sd_flush_high
    ) AS `d`
  ) AS `r`
  GROUP BY
    `id`
) AS `s`
ON `t`.`id` = `s`.`id`
WHEN MATCHED AND `s`.`__sd_deleted` AND NOT `s`.`__sd_upserted` THEN DELETE
WHEN MATCHED AND `s`.`__sd_deleted` THEN UPDATE SET
  `t`.`flag` = `s`.`__sd_replaced_flag`,
  `t`.`small` = `s`.`__sd_replaced_small`,
  `t`.`count` = `s`.`__sd_replaced_count`,
  `t`.`amount` = `s`.`__sd_replaced_amount`,
  `t`.`ratio` = `s`.`__sd_replaced_ratio`,
  `t`.`score` = `s`.`__sd_replaced_score`,
  `t`.`day` = `s`.`__sd_replaced_day`,
  `t`.`local time stamp` = `s`.`__sd_replaced_local time stamp`,
  `t`.`happened.at` = `s`.`__sd_replaced_happened.at`,
  `t`.`payload` = `s`.`__sd_replaced_payload`,
  `t`.`doc` = `s`.`__sd_replaced_doc`,
  `t`.`name-with-hyphen` = `s`.`__sd_replaced_name-with-hyphen`,
  `t`.`attrs` = `s`.`__sd_replaced_attrs`,
  `t`.`at``time` = `s`.`__sd_replaced_at``time`,
  `t`.`_fivetran_synced` = `s`.`__sd_replaced__fivetran_synced`,
  `t`.`_fivetran_deleted` = `s`.`__sd_replaced__fivetran_deleted`
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
WHEN NOT MATCHED AND `s`.`__sd_upserted` THEN INSERT (
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
  `s`.`__sd_replaced_flag`,
  `s`.`__sd_replaced_small`,
  `s`.`__sd_replaced_count`,
  `s`.`__sd_replaced_amount`,
  `s`.`__sd_replaced_ratio`,
  `s`.`__sd_replaced_score`,
  `s`.`__sd_replaced_day`,
  `s`.`__sd_replaced_local time stamp`,
  `s`.`__sd_replaced_happened.at`,
  `s`.`__sd_replaced_payload`,
  `s`.`__sd_replaced_doc`,
  `s`.`__sd_replaced_name-with-hyphen`,
  `s`.`__sd_replaced_attrs`,
  `s`.`__sd_replaced_at``time`,
  `s`.`__sd_replaced__fivetran_synced`,
  `s`.`__sd_replaced__fivetran_deleted`
)
