MERGE INTO `lake`.`my-schema.v2`.`order ``items`` 2024` AS `t`
USING (
  SELECT
    CASE
      WHEN `id` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      OR `id` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      THEN RAISE_ERROR('key column id is NULL')
      ELSE CAST(`id` AS BIGINT)
    END AS `id`,
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
    `__sd_op`
  FROM `sd_batch`
  WHERE
    NOT `__sd_dup`
  UNION ALL
  SELECT
    `id`,
    COALESCE(
      MAX_BY(`flag`, `__sd_seq`) FILTER(WHERE
        `flag` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `flag`,
    COALESCE(
      MAX_BY(`small`, `__sd_seq`) FILTER(WHERE
        `small` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `small`,
    COALESCE(
      MAX_BY(`count`, `__sd_seq`) FILTER(WHERE
        `count` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `count`,
    COALESCE(
      MAX_BY(`amount`, `__sd_seq`) FILTER(WHERE
        `amount` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `amount`,
    COALESCE(
      MAX_BY(`ratio`, `__sd_seq`) FILTER(WHERE
        `ratio` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `ratio`,
    COALESCE(
      MAX_BY(`score`, `__sd_seq`) FILTER(WHERE
        `score` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `score`,
    COALESCE(
      MAX_BY(`day`, `__sd_seq`) FILTER(WHERE
        `day` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `day`,
    COALESCE(
      MAX_BY(`local time stamp`, `__sd_seq`) FILTER(WHERE
        `local time stamp` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `local time stamp`,
    COALESCE(
      MAX_BY(`happened.at`, `__sd_seq`) FILTER(WHERE
        `happened.at` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `happened.at`,
    COALESCE(
      MAX_BY(`payload`, `__sd_seq`) FILTER(WHERE
        `payload` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `payload`,
    COALESCE(
      MAX_BY(`doc`, `__sd_seq`) FILTER(WHERE
        `doc` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `doc`,
    COALESCE(
      MAX_BY(`name-with-hyphen`, `__sd_seq`) FILTER(WHERE
        `name-with-hyphen` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `name-with-hyphen`,
    COALESCE(
      MAX_BY(`attrs`, `__sd_seq`) FILTER(WHERE
        `attrs` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `attrs`,
    COALESCE(
      MAX_BY(`at``time`, `__sd_seq`) FILTER(WHERE
        `at``time` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `at``time`,
    COALESCE(
      MAX_BY(`_fivetran_synced`, `__sd_seq`) FILTER(WHERE
        `_fivetran_synced` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `_fivetran_synced`,
    COALESCE(
      MAX_BY(`_fivetran_deleted`, `__sd_seq`) FILTER(WHERE
        `_fivetran_deleted` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `_fivetran_deleted`,
    CASE
      WHEN MAX(`__sd_op` = 'delete')
      THEN 'delete'
      WHEN MAX(`__sd_op` = 'upsert')
      THEN 'upsert'
      ELSE 'update'
    END AS `__sd_op`
  FROM (
    SELECT
      CASE
        WHEN `id` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
        OR `id` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
        THEN RAISE_ERROR('key column id is NULL')
        ELSE CAST(`id` AS BIGINT)
      END AS `id`,
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
  `t`.`flag` = CASE
    WHEN `s`.`flag` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`flag`
    WHEN `s`.`flag` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`flag` AS BOOLEAN)
  END,
  `t`.`small` = CASE
    WHEN `s`.`small` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`small`
    WHEN `s`.`small` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`small` AS SMALLINT)
  END,
  `t`.`count` = CASE
    WHEN `s`.`count` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`count`
    WHEN `s`.`count` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`count` AS INT)
  END,
  `t`.`amount` = CASE
    WHEN `s`.`amount` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`amount`
    WHEN `s`.`amount` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`amount` AS DECIMAL(18, 4))
  END,
  `t`.`ratio` = CASE
    WHEN `s`.`ratio` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`ratio`
    WHEN `s`.`ratio` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    WHEN ABS(CAST(`s`.`ratio` AS FLOAT)) = CAST('Infinity' AS DOUBLE)
    AND NOT LOWER(`s`.`ratio`) LIKE '%inf%'
    THEN RAISE_ERROR('a value does not fit column ratio')
    ELSE CAST(`s`.`ratio` AS FLOAT)
  END,
  `t`.`score` = CASE
    WHEN `s`.`score` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`score`
    WHEN `s`.`score` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    WHEN ABS(CAST(`s`.`score` AS DOUBLE)) = CAST('Infinity' AS DOUBLE)
    AND NOT LOWER(`s`.`score`) LIKE '%inf%'
    THEN RAISE_ERROR('a value does not fit column score')
    ELSE CAST(`s`.`score` AS DOUBLE)
  END,
  `t`.`day` = CASE
    WHEN `s`.`day` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`day`
    WHEN `s`.`day` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`day` AS DATE)
  END,
  `t`.`local time stamp` = CASE
    WHEN `s`.`local time stamp` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`local time stamp`
    WHEN `s`.`local time stamp` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`local time stamp` AS TIMESTAMP_NTZ)
  END,
  `t`.`happened.at` = CASE
    WHEN `s`.`happened.at` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`happened.at`
    WHEN `s`.`happened.at` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`happened.at` AS TIMESTAMP)
  END,
  `t`.`payload` = CASE
    WHEN `s`.`payload` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`payload`
    WHEN `s`.`payload` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE COALESCE(TRY_TO_BINARY(`s`.`payload`, 'base64'), ENCODE(`s`.`payload`, 'UTF-8'))
  END,
  `t`.`doc` = CASE
    WHEN `s`.`doc` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`doc`
    WHEN `s`.`doc` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE `s`.`doc`
  END,
  `t`.`name-with-hyphen` = CASE
    WHEN `s`.`name-with-hyphen` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`name-with-hyphen`
    WHEN `s`.`name-with-hyphen` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE `s`.`name-with-hyphen`
  END,
  `t`.`attrs` = CASE
    WHEN `s`.`attrs` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`attrs`
    WHEN `s`.`attrs` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE `s`.`attrs`
  END,
  `t`.`at``time` = CASE
    WHEN `s`.`at``time` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`at``time`
    WHEN `s`.`at``time` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    WHEN NOT REGEXP_LIKE(`s`.`at``time`, '^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,9})?)?$')
    THEN RAISE_ERROR('a value does not fit column at`time')
    ELSE `s`.`at``time`
  END,
  `t`.`_fivetran_synced` = CASE
    WHEN `s`.`_fivetran_synced` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`_fivetran_synced`
    WHEN `s`.`_fivetran_synced` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`_fivetran_synced` AS TIMESTAMP)
  END,
  `t`.`_fivetran_deleted` = CASE
    WHEN `s`.`_fivetran_deleted` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`_fivetran_deleted`
    WHEN `s`.`_fivetran_deleted` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`_fivetran_deleted` AS BOOLEAN)
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
  CASE
    WHEN `s`.`flag` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`flag` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`flag` AS BOOLEAN)
  END,
  CASE
    WHEN `s`.`small` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`small` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`small` AS SMALLINT)
  END,
  CASE
    WHEN `s`.`count` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`count` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`count` AS INT)
  END,
  CASE
    WHEN `s`.`amount` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`amount` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`amount` AS DECIMAL(18, 4))
  END,
  CASE
    WHEN `s`.`ratio` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`ratio` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    WHEN ABS(CAST(`s`.`ratio` AS FLOAT)) = CAST('Infinity' AS DOUBLE)
    AND NOT LOWER(`s`.`ratio`) LIKE '%inf%'
    THEN RAISE_ERROR('a value does not fit column ratio')
    ELSE CAST(`s`.`ratio` AS FLOAT)
  END,
  CASE
    WHEN `s`.`score` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`score` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    WHEN ABS(CAST(`s`.`score` AS DOUBLE)) = CAST('Infinity' AS DOUBLE)
    AND NOT LOWER(`s`.`score`) LIKE '%inf%'
    THEN RAISE_ERROR('a value does not fit column score')
    ELSE CAST(`s`.`score` AS DOUBLE)
  END,
  CASE
    WHEN `s`.`day` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`day` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`day` AS DATE)
  END,
  CASE
    WHEN `s`.`local time stamp` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`local time stamp` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`local time stamp` AS TIMESTAMP_NTZ)
  END,
  CASE
    WHEN `s`.`happened.at` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`happened.at` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`happened.at` AS TIMESTAMP)
  END,
  CASE
    WHEN `s`.`payload` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`payload` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE COALESCE(TRY_TO_BINARY(`s`.`payload`, 'base64'), ENCODE(`s`.`payload`, 'UTF-8'))
  END,
  CASE
    WHEN `s`.`doc` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`doc` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE `s`.`doc`
  END,
  CASE
    WHEN `s`.`name-with-hyphen` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`name-with-hyphen` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE `s`.`name-with-hyphen`
  END,
  CASE
    WHEN `s`.`attrs` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`attrs` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE `s`.`attrs`
  END,
  CASE
    WHEN `s`.`at``time` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`at``time` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    WHEN NOT REGEXP_LIKE(`s`.`at``time`, '^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,9})?)?$')
    THEN RAISE_ERROR('a value does not fit column at`time')
    ELSE `s`.`at``time`
  END,
  CASE
    WHEN `s`.`_fivetran_synced` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`_fivetran_synced` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`_fivetran_synced` AS TIMESTAMP)
  END,
  CASE
    WHEN `s`.`_fivetran_deleted` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN NULL
    WHEN `s`.`_fivetran_deleted` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`_fivetran_deleted` AS BOOLEAN)
  END
)
