SELECT
  MIN(
    CASE
      WHEN (
        `id` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
        OR `id` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      )
      OR TRY_CAST(`id` AS BIGINT) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_0`,
  MIN(
    CASE
      WHEN `flag` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `flag` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND TRY_CAST(`flag` AS BOOLEAN) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_1`,
  MIN(
    CASE
      WHEN `small` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `small` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND TRY_CAST(`small` AS SMALLINT) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_2`,
  MIN(
    CASE
      WHEN `count` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `count` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND TRY_CAST(`count` AS INT) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_3`,
  MIN(
    CASE
      WHEN `amount` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `amount` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND TRY_CAST(`amount` AS DECIMAL(18, 4)) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_4`,
  MIN(
    CASE
      WHEN `ratio` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `ratio` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND (
        TRY_CAST(`ratio` AS FLOAT) IS NULL
        OR (
          ABS(TRY_CAST(`ratio` AS FLOAT)) = CAST('Infinity' AS DOUBLE)
          AND NOT LOWER(`ratio`) LIKE '%inf%'
        )
      )
      THEN `__sd_seq`
    END
  ) AS `check_5`,
  MIN(
    CASE
      WHEN `score` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `score` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND (
        TRY_CAST(`score` AS DOUBLE) IS NULL
        OR (
          ABS(TRY_CAST(`score` AS DOUBLE)) = CAST('Infinity' AS DOUBLE)
          AND NOT LOWER(`score`) LIKE '%inf%'
        )
      )
      THEN `__sd_seq`
    END
  ) AS `check_6`,
  MIN(
    CASE
      WHEN `day` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `day` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND TRY_CAST(`day` AS DATE) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_7`,
  MIN(
    CASE
      WHEN `local time stamp` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `local time stamp` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND TRY_CAST(`local time stamp` AS TIMESTAMP_NTZ) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_8`,
  MIN(
    CASE
      WHEN `happened.at` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `happened.at` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND TRY_CAST(`happened.at` AS TIMESTAMP) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_9`,
  MIN(
    CASE
      WHEN `at``time` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `at``time` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND NOT REGEXP_LIKE(`at``time`, '^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,9})?)?$')
      THEN `__sd_seq`
    END
  ) AS `check_14`,
  MIN(
    CASE
      WHEN `_fivetran_synced` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `_fivetran_synced` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND TRY_CAST(`_fivetran_synced` AS TIMESTAMP) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_15`,
  MIN(
    CASE
      WHEN `_fivetran_deleted` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `_fivetran_deleted` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND TRY_CAST(`_fivetran_deleted` AS BOOLEAN) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_16`
FROM `sd_batch`
