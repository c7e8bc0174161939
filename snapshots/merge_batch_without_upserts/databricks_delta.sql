MERGE INTO `lake`.`sales`.`orders` AS `t`
USING (
  SELECT
    CASE
      WHEN `id` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      OR `id` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      THEN RAISE_ERROR('key column id is NULL')
      ELSE CAST(`id` AS INT)
    END AS `id`,
    CASE
      WHEN `region` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
      OR `region` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
      THEN RAISE_ERROR('key column region is NULL')
      ELSE `region`
    END AS `region`,
    `amount`,
    `note`,
    `_fivetran_synced`,
    `_fivetran_deleted`,
    `__sd_op`
  FROM `sd_batch`
  WHERE
    NOT `__sd_dup`
  UNION ALL
  SELECT
    `id`,
    `region`,
    COALESCE(
      MAX_BY(`amount`, `__sd_seq`) FILTER(WHERE
        `amount` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `amount`,
    COALESCE(
      MAX_BY(`note`, `__sd_seq`) FILTER(WHERE
        `note` <> 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'),
      'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    ) AS `note`,
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
        ELSE CAST(`id` AS INT)
      END AS `id`,
      CASE
        WHEN `region` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
        OR `region` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
        THEN RAISE_ERROR('key column region is NULL')
        ELSE `region`
      END AS `region`,
      `amount`,
      `note`,
      `_fivetran_synced`,
      `_fivetran_deleted`,
      `__sd_op`,
      `__sd_seq`
    FROM `sd_batch`
    WHERE
      `__sd_dup`
  ) AS `b`
  GROUP BY
    `id`,
    `region`
) AS `s`
ON `t`.`id` = `s`.`id` AND `t`.`region` = `s`.`region`
WHEN MATCHED AND `s`.`__sd_op` = 'delete' THEN DELETE
WHEN MATCHED THEN UPDATE SET
  `t`.`amount` = CASE
    WHEN `s`.`amount` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`amount`
    WHEN `s`.`amount` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE CAST(`s`.`amount` AS DECIMAL(10, 2))
  END,
  `t`.`note` = CASE
    WHEN `s`.`note` = 'unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3'
    THEN `t`.`note`
    WHEN `s`.`note` = 'null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP'
    THEN NULL
    ELSE `s`.`note`
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
