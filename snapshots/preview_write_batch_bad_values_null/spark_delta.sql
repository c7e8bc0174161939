-- 1. stage view 'sd_batch' from [replace:/data/upsert.csv.zstd.aes] (typed: decoding checks every value); bad_value_policy=null: a value of a non-key column that does not fit is NULL, recorded in view 'sd_changes'

-- 2. create the changes table 'sd__changes' if missing (when staging changed a value)
CREATE TABLE IF NOT EXISTS `spark_catalog`.`sales`.`sd__changes` (
  `table_name` STRING,
  `column_name` STRING,
  `change` STRING,
  `reason` STRING,
  `batch_file` STRING,
  `file_row` BIGINT,
  `primary_key` STRING,
  `_fivetran_synced` TIMESTAMP,
  `recorded_at` TIMESTAMP
)
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported'
);

-- 3. record the values changed in 'orders' in 'sd__changes' (when staging changed a value)
MERGE INTO `spark_catalog`.`sales`.`sd__changes` AS `t`
USING (
  SELECT
    'orders' AS `table_name`,
    `column_name`,
    `change`,
    `reason`,
    `batch_file`,
    `file_row`,
    TO_JSON(STRUCT(`__sd_key_0` AS `id`)) AS `primary_key`,
    CAST(`__sd_synced` AS TIMESTAMP) AS `_fivetran_synced`,
    CURRENT_TIMESTAMP() AS `recorded_at`
  FROM `sd_changes`
) AS `s`
ON `t`.`table_name` = 'orders'
AND `t`.`batch_file` = `s`.`batch_file`
AND `t`.`file_row` = `s`.`file_row`
AND `t`.`column_name` = `s`.`column_name`
AND `t`.`_fivetran_synced` IS NOT DISTINCT FROM `s`.`_fivetran_synced`
WHEN NOT MATCHED THEN INSERT (
  `table_name`,
  `column_name`,
  `change`,
  `reason`,
  `batch_file`,
  `file_row`,
  `primary_key`,
  `_fivetran_synced`,
  `recorded_at`
) VALUES (
  `s`.`table_name`,
  `s`.`column_name`,
  `s`.`change`,
  `s`.`reason`,
  `s`.`batch_file`,
  `s`.`file_row`,
  `s`.`primary_key`,
  `s`.`_fivetran_synced`,
  `s`.`recorded_at`
);

-- 4. merge batch into 'orders'
MERGE INTO `spark_catalog`.`sales`.`orders` AS `t`
USING (
  SELECT
    `id`,
    `amount`,
    `code`,
    `_fivetran_synced`,
    `_fivetran_deleted`,
    `__sd_unmodified_amount`,
    `__sd_unmodified_code`,
    `__sd_unmodified__fivetran_synced`,
    `__sd_unmodified__fivetran_deleted`,
    `__sd_op`
  FROM `sd_batch`
  WHERE
    NOT `__sd_dup`
  UNION ALL
  SELECT
    `id`,
    MAX_BY(`amount`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_amount`) AS `amount`,
    MAX_BY(`code`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_code`) AS `code`,
    MAX_BY(`_fivetran_synced`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_synced`) AS `_fivetran_synced`,
    MAX_BY(`_fivetran_deleted`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_deleted`) AS `_fivetran_deleted`,
    MIN(`__sd_unmodified_amount`) AS `__sd_unmodified_amount`,
    MIN(`__sd_unmodified_code`) AS `__sd_unmodified_code`,
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
      `amount`,
      `code`,
      `_fivetran_synced`,
      `_fivetran_deleted`,
      `__sd_unmodified_amount`,
      `__sd_unmodified_code`,
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
  `t`.`amount` = CASE WHEN `s`.`__sd_unmodified_amount` THEN `t`.`amount` ELSE `s`.`amount` END,
  `t`.`code` = CASE WHEN `s`.`__sd_unmodified_code` THEN `t`.`code` ELSE `s`.`code` END,
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
WHEN NOT MATCHED AND `s`.`__sd_op` = 'upsert' THEN INSERT (`id`, `amount`, `code`, `_fivetran_synced`, `_fivetran_deleted`) VALUES (
  `s`.`id`,
  `s`.`amount`,
  `s`.`code`,
  `s`.`_fivetran_synced`,
  `s`.`_fivetran_deleted`
);

-- 4. merge batch into 'orders', or instead when no key repeats in the staged batch:
MERGE INTO `spark_catalog`.`sales`.`orders` AS `t`
USING (
  SELECT
    `id`,
    `amount`,
    `code`,
    `_fivetran_synced`,
    `_fivetran_deleted`,
    `__sd_unmodified_amount`,
    `__sd_unmodified_code`,
    `__sd_unmodified__fivetran_synced`,
    `__sd_unmodified__fivetran_deleted`,
    `__sd_op`
  FROM `sd_batch`
) AS `s`
ON `t`.`id` = `s`.`id`
WHEN MATCHED AND `s`.`__sd_op` = 'delete' THEN DELETE
WHEN MATCHED THEN UPDATE SET
  `t`.`amount` = CASE WHEN `s`.`__sd_unmodified_amount` THEN `t`.`amount` ELSE `s`.`amount` END,
  `t`.`code` = CASE WHEN `s`.`__sd_unmodified_code` THEN `t`.`code` ELSE `s`.`code` END,
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
WHEN NOT MATCHED AND `s`.`__sd_op` = 'upsert' THEN INSERT (`id`, `amount`, `code`, `_fivetran_synced`, `_fivetran_deleted`) VALUES (
  `s`.`id`,
  `s`.`amount`,
  `s`.`code`,
  `s`.`_fivetran_synced`,
  `s`.`_fivetran_deleted`
);

-- 4. merge batch into 'orders', or instead when no key repeats, and few enough keys to bind as a filter:
MERGE INTO `spark_catalog`.`sales`.`orders` AS `t`
USING (
  SELECT
    `id`,
    `amount`,
    `code`,
    `_fivetran_synced`,
    `_fivetran_deleted`,
    `__sd_unmodified_amount`,
    `__sd_unmodified_code`,
    `__sd_unmodified__fivetran_synced`,
    `__sd_unmodified__fivetran_deleted`,
    `__sd_op`
  FROM `sd_batch`
) AS `s`
ON `t`.`id` = `s`.`id`
AND `t`.`id` IN (
  :sd_key_0_0,
  :sd_key_0_1,
  :sd_key_0_2,
  :sd_key_0_3,
  :sd_key_0_4,
  :sd_key_0_5,
  :sd_key_0_6,
  :sd_key_0_7,
  :sd_key_0_8,
  :sd_key_0_9,
  :sd_key_0_10,
  :sd_key_0_11,
  :sd_key_0_12,
  :sd_key_0_13,
  :sd_key_0_14,
  :sd_key_0_15,
  :sd_key_0_16,
  :sd_key_0_17,
  :sd_key_0_18,
  :sd_key_0_19,
  :sd_key_0_20,
  :sd_key_0_21,
  :sd_key_0_22,
  :sd_key_0_23,
  :sd_key_0_24,
  :sd_key_0_25,
  :sd_key_0_26,
  :sd_key_0_27,
  :sd_key_0_28,
  :sd_key_0_29,
  :sd_key_0_30,
  :sd_key_0_31,
  :sd_key_0_32,
  :sd_key_0_33,
  :sd_key_0_34,
  :sd_key_0_35,
  :sd_key_0_36,
  :sd_key_0_37,
  :sd_key_0_38,
  :sd_key_0_39,
  :sd_key_0_40,
  :sd_key_0_41,
  :sd_key_0_42,
  :sd_key_0_43,
  :sd_key_0_44,
  :sd_key_0_45,
  :sd_key_0_46,
  :sd_key_0_47,
  :sd_key_0_48,
  :sd_key_0_49,
  :sd_key_0_50,
  :sd_key_0_51,
  :sd_key_0_52,
  :sd_key_0_53,
  :sd_key_0_54,
  :sd_key_0_55,
  :sd_key_0_56,
  :sd_key_0_57,
  :sd_key_0_58,
  :sd_key_0_59,
  :sd_key_0_60,
  :sd_key_0_61,
  :sd_key_0_62,
  :sd_key_0_63,
  :sd_key_0_64,
  :sd_key_0_65,
  :sd_key_0_66,
  :sd_key_0_67,
  :sd_key_0_68,
  :sd_key_0_69,
  :sd_key_0_70,
  :sd_key_0_71,
  :sd_key_0_72,
  :sd_key_0_73,
  :sd_key_0_74,
  :sd_key_0_75,
  :sd_key_0_76,
  :sd_key_0_77,
  :sd_key_0_78,
  :sd_key_0_79,
  :sd_key_0_80,
  :sd_key_0_81,
  :sd_key_0_82,
  :sd_key_0_83,
  :sd_key_0_84,
  :sd_key_0_85,
  :sd_key_0_86,
  :sd_key_0_87,
  :sd_key_0_88,
  :sd_key_0_89,
  :sd_key_0_90,
  :sd_key_0_91,
  :sd_key_0_92,
  :sd_key_0_93,
  :sd_key_0_94,
  :sd_key_0_95,
  :sd_key_0_96,
  :sd_key_0_97,
  :sd_key_0_98,
  :sd_key_0_99,
  :sd_key_0_100,
  :sd_key_0_101,
  :sd_key_0_102,
  :sd_key_0_103,
  :sd_key_0_104,
  :sd_key_0_105,
  :sd_key_0_106,
  :sd_key_0_107,
  :sd_key_0_108,
  :sd_key_0_109,
  :sd_key_0_110,
  :sd_key_0_111,
  :sd_key_0_112,
  :sd_key_0_113,
  :sd_key_0_114,
  :sd_key_0_115,
  :sd_key_0_116,
  :sd_key_0_117,
  :sd_key_0_118,
  :sd_key_0_119,
  :sd_key_0_120,
  :sd_key_0_121,
  :sd_key_0_122,
  :sd_key_0_123,
  :sd_key_0_124,
  :sd_key_0_125,
  :sd_key_0_126,
  :sd_key_0_127,
  :sd_key_0_128,
  :sd_key_0_129,
  :sd_key_0_130,
  :sd_key_0_131,
  :sd_key_0_132,
  :sd_key_0_133,
  :sd_key_0_134,
  :sd_key_0_135,
  :sd_key_0_136,
  :sd_key_0_137,
  :sd_key_0_138,
  :sd_key_0_139,
  :sd_key_0_140,
  :sd_key_0_141,
  :sd_key_0_142,
  :sd_key_0_143,
  :sd_key_0_144,
  :sd_key_0_145,
  :sd_key_0_146,
  :sd_key_0_147,
  :sd_key_0_148,
  :sd_key_0_149,
  :sd_key_0_150,
  :sd_key_0_151,
  :sd_key_0_152,
  :sd_key_0_153,
  :sd_key_0_154,
  :sd_key_0_155,
  :sd_key_0_156,
  :sd_key_0_157,
  :sd_key_0_158,
  :sd_key_0_159,
  :sd_key_0_160,
  :sd_key_0_161,
  :sd_key_0_162,
  :sd_key_0_163,
  :sd_key_0_164,
  :sd_key_0_165,
  :sd_key_0_166,
  :sd_key_0_167,
  :sd_key_0_168,
  :sd_key_0_169,
  :sd_key_0_170,
  :sd_key_0_171,
  :sd_key_0_172,
  :sd_key_0_173,
  :sd_key_0_174,
  :sd_key_0_175,
  :sd_key_0_176,
  :sd_key_0_177,
  :sd_key_0_178,
  :sd_key_0_179,
  :sd_key_0_180,
  :sd_key_0_181,
  :sd_key_0_182,
  :sd_key_0_183,
  :sd_key_0_184,
  :sd_key_0_185,
  :sd_key_0_186,
  :sd_key_0_187,
  :sd_key_0_188,
  :sd_key_0_189,
  :sd_key_0_190,
  :sd_key_0_191,
  :sd_key_0_192,
  :sd_key_0_193,
  :sd_key_0_194,
  :sd_key_0_195,
  :sd_key_0_196,
  :sd_key_0_197,
  :sd_key_0_198,
  :sd_key_0_199
)
WHEN MATCHED AND `s`.`__sd_op` = 'delete' THEN DELETE
WHEN MATCHED THEN UPDATE SET
  `t`.`amount` = CASE WHEN `s`.`__sd_unmodified_amount` THEN `t`.`amount` ELSE `s`.`amount` END,
  `t`.`code` = CASE WHEN `s`.`__sd_unmodified_code` THEN `t`.`code` ELSE `s`.`code` END,
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
WHEN NOT MATCHED AND `s`.`__sd_op` = 'upsert' THEN INSERT (`id`, `amount`, `code`, `_fivetran_synced`, `_fivetran_deleted`) VALUES (
  `s`.`id`,
  `s`.`amount`,
  `s`.`code`,
  `s`.`_fivetran_synced`,
  `s`.`_fivetran_deleted`
);

-- 4. merge batch into 'orders', or instead when repeated keys folded, and few enough keys to bind as a filter:
MERGE INTO `spark_catalog`.`sales`.`orders` AS `t`
USING (
  SELECT
    `id`,
    `amount`,
    `code`,
    `_fivetran_synced`,
    `_fivetran_deleted`,
    `__sd_unmodified_amount`,
    `__sd_unmodified_code`,
    `__sd_unmodified__fivetran_synced`,
    `__sd_unmodified__fivetran_deleted`,
    `__sd_op`
  FROM `sd_batch`
  WHERE
    NOT `__sd_dup`
  UNION ALL
  SELECT
    `id`,
    MAX_BY(`amount`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_amount`) AS `amount`,
    MAX_BY(`code`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified_code`) AS `code`,
    MAX_BY(`_fivetran_synced`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_synced`) AS `_fivetran_synced`,
    MAX_BY(`_fivetran_deleted`, `__sd_seq`) FILTER(WHERE
      NOT `__sd_unmodified__fivetran_deleted`) AS `_fivetran_deleted`,
    MIN(`__sd_unmodified_amount`) AS `__sd_unmodified_amount`,
    MIN(`__sd_unmodified_code`) AS `__sd_unmodified_code`,
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
      `amount`,
      `code`,
      `_fivetran_synced`,
      `_fivetran_deleted`,
      `__sd_unmodified_amount`,
      `__sd_unmodified_code`,
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
AND `t`.`id` IN (
  :sd_key_0_0,
  :sd_key_0_1,
  :sd_key_0_2,
  :sd_key_0_3,
  :sd_key_0_4,
  :sd_key_0_5,
  :sd_key_0_6,
  :sd_key_0_7,
  :sd_key_0_8,
  :sd_key_0_9,
  :sd_key_0_10,
  :sd_key_0_11,
  :sd_key_0_12,
  :sd_key_0_13,
  :sd_key_0_14,
  :sd_key_0_15,
  :sd_key_0_16,
  :sd_key_0_17,
  :sd_key_0_18,
  :sd_key_0_19,
  :sd_key_0_20,
  :sd_key_0_21,
  :sd_key_0_22,
  :sd_key_0_23,
  :sd_key_0_24,
  :sd_key_0_25,
  :sd_key_0_26,
  :sd_key_0_27,
  :sd_key_0_28,
  :sd_key_0_29,
  :sd_key_0_30,
  :sd_key_0_31,
  :sd_key_0_32,
  :sd_key_0_33,
  :sd_key_0_34,
  :sd_key_0_35,
  :sd_key_0_36,
  :sd_key_0_37,
  :sd_key_0_38,
  :sd_key_0_39,
  :sd_key_0_40,
  :sd_key_0_41,
  :sd_key_0_42,
  :sd_key_0_43,
  :sd_key_0_44,
  :sd_key_0_45,
  :sd_key_0_46,
  :sd_key_0_47,
  :sd_key_0_48,
  :sd_key_0_49,
  :sd_key_0_50,
  :sd_key_0_51,
  :sd_key_0_52,
  :sd_key_0_53,
  :sd_key_0_54,
  :sd_key_0_55,
  :sd_key_0_56,
  :sd_key_0_57,
  :sd_key_0_58,
  :sd_key_0_59,
  :sd_key_0_60,
  :sd_key_0_61,
  :sd_key_0_62,
  :sd_key_0_63,
  :sd_key_0_64,
  :sd_key_0_65,
  :sd_key_0_66,
  :sd_key_0_67,
  :sd_key_0_68,
  :sd_key_0_69,
  :sd_key_0_70,
  :sd_key_0_71,
  :sd_key_0_72,
  :sd_key_0_73,
  :sd_key_0_74,
  :sd_key_0_75,
  :sd_key_0_76,
  :sd_key_0_77,
  :sd_key_0_78,
  :sd_key_0_79,
  :sd_key_0_80,
  :sd_key_0_81,
  :sd_key_0_82,
  :sd_key_0_83,
  :sd_key_0_84,
  :sd_key_0_85,
  :sd_key_0_86,
  :sd_key_0_87,
  :sd_key_0_88,
  :sd_key_0_89,
  :sd_key_0_90,
  :sd_key_0_91,
  :sd_key_0_92,
  :sd_key_0_93,
  :sd_key_0_94,
  :sd_key_0_95,
  :sd_key_0_96,
  :sd_key_0_97,
  :sd_key_0_98,
  :sd_key_0_99,
  :sd_key_0_100,
  :sd_key_0_101,
  :sd_key_0_102,
  :sd_key_0_103,
  :sd_key_0_104,
  :sd_key_0_105,
  :sd_key_0_106,
  :sd_key_0_107,
  :sd_key_0_108,
  :sd_key_0_109,
  :sd_key_0_110,
  :sd_key_0_111,
  :sd_key_0_112,
  :sd_key_0_113,
  :sd_key_0_114,
  :sd_key_0_115,
  :sd_key_0_116,
  :sd_key_0_117,
  :sd_key_0_118,
  :sd_key_0_119,
  :sd_key_0_120,
  :sd_key_0_121,
  :sd_key_0_122,
  :sd_key_0_123,
  :sd_key_0_124,
  :sd_key_0_125,
  :sd_key_0_126,
  :sd_key_0_127,
  :sd_key_0_128,
  :sd_key_0_129,
  :sd_key_0_130,
  :sd_key_0_131,
  :sd_key_0_132,
  :sd_key_0_133,
  :sd_key_0_134,
  :sd_key_0_135,
  :sd_key_0_136,
  :sd_key_0_137,
  :sd_key_0_138,
  :sd_key_0_139,
  :sd_key_0_140,
  :sd_key_0_141,
  :sd_key_0_142,
  :sd_key_0_143,
  :sd_key_0_144,
  :sd_key_0_145,
  :sd_key_0_146,
  :sd_key_0_147,
  :sd_key_0_148,
  :sd_key_0_149,
  :sd_key_0_150,
  :sd_key_0_151,
  :sd_key_0_152,
  :sd_key_0_153,
  :sd_key_0_154,
  :sd_key_0_155,
  :sd_key_0_156,
  :sd_key_0_157,
  :sd_key_0_158,
  :sd_key_0_159,
  :sd_key_0_160,
  :sd_key_0_161,
  :sd_key_0_162,
  :sd_key_0_163,
  :sd_key_0_164,
  :sd_key_0_165,
  :sd_key_0_166,
  :sd_key_0_167,
  :sd_key_0_168,
  :sd_key_0_169,
  :sd_key_0_170,
  :sd_key_0_171,
  :sd_key_0_172,
  :sd_key_0_173,
  :sd_key_0_174,
  :sd_key_0_175,
  :sd_key_0_176,
  :sd_key_0_177,
  :sd_key_0_178,
  :sd_key_0_179,
  :sd_key_0_180,
  :sd_key_0_181,
  :sd_key_0_182,
  :sd_key_0_183,
  :sd_key_0_184,
  :sd_key_0_185,
  :sd_key_0_186,
  :sd_key_0_187,
  :sd_key_0_188,
  :sd_key_0_189,
  :sd_key_0_190,
  :sd_key_0_191,
  :sd_key_0_192,
  :sd_key_0_193,
  :sd_key_0_194,
  :sd_key_0_195,
  :sd_key_0_196,
  :sd_key_0_197,
  :sd_key_0_198,
  :sd_key_0_199
)
WHEN MATCHED AND `s`.`__sd_op` = 'delete' THEN DELETE
WHEN MATCHED THEN UPDATE SET
  `t`.`amount` = CASE WHEN `s`.`__sd_unmodified_amount` THEN `t`.`amount` ELSE `s`.`amount` END,
  `t`.`code` = CASE WHEN `s`.`__sd_unmodified_code` THEN `t`.`code` ELSE `s`.`code` END,
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
WHEN NOT MATCHED AND `s`.`__sd_op` = 'upsert' THEN INSERT (`id`, `amount`, `code`, `_fivetran_synced`, `_fivetran_deleted`) VALUES (
  `s`.`id`,
  `s`.`amount`,
  `s`.`code`,
  `s`.`_fivetran_synced`,
  `s`.`_fivetran_deleted`
);
