SELECT
  MIN(
    CASE
      WHEN (
        `id` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
        OR `id` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      )
      OR TRY_CAST(`id` AS INT) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_0`,
  MIN(
    CASE
      WHEN `region` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      OR `region` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      THEN `__sd_seq`
    END
  ) AS `check_1`,
  MIN(
    CASE
      WHEN `amount` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `amount` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND TRY_CAST(`amount` AS DECIMAL(10, 2)) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_2`,
  MIN(
    CASE
      WHEN (
        `__sd_op` IN ('earliest_start', 'update', 'upsert')
        AND (
          `_fivetran_start` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
          OR `_fivetran_start` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
        )
      )
      OR (
        `_fivetran_start` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
        AND `_fivetran_start` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
        AND TRY_CAST(`_fivetran_start` AS TIMESTAMP) IS NULL
      )
      THEN `__sd_seq`
    END
  ) AS `check_4`,
  MIN(
    CASE
      WHEN (
        `__sd_op` IN ('upsert', 'delete')
        AND (
          `_fivetran_end` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
          OR `_fivetran_end` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
        )
      )
      OR (
        `_fivetran_end` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
        AND `_fivetran_end` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
        AND TRY_CAST(`_fivetran_end` AS TIMESTAMP) IS NULL
      )
      THEN `__sd_seq`
    END
  ) AS `check_5`,
  MIN(
    CASE
      WHEN (
        `__sd_op` IN ('upsert')
        AND (
          `_fivetran_active` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
          OR `_fivetran_active` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
        )
      )
      OR (
        `_fivetran_active` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
        AND `_fivetran_active` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
        AND TRY_CAST(`_fivetran_active` AS BOOLEAN) IS NULL
      )
      THEN `__sd_seq`
    END
  ) AS `check_6`,
  MIN(
    CASE
      WHEN `_fivetran_synced` <> 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      AND `_fivetran_synced` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      AND TRY_CAST(`_fivetran_synced` AS TIMESTAMP) IS NULL
      THEN `__sd_seq`
    END
  ) AS `check_7`
FROM `sd_batch`
