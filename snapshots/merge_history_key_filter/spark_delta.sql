MERGE INTO `lake`.`sales`.`orders_history` AS `t`
USING (
  WITH `__sd_rows` AS (
    SELECT
      `id`,
      `region`,
      `_fivetran_start`,
      CASE WHEN `__sd_unmodified_amount` THEN NULL ELSE ARRAY(`amount`) END AS `amount`,
      CASE WHEN `__sd_unmodified_note``s` THEN NULL ELSE ARRAY(`note``s`) END AS `note``s`,
      CASE WHEN `__sd_unmodified__fivetran_end` THEN NULL ELSE ARRAY(`_fivetran_end`) END AS `_fivetran_end`,
      CASE
        WHEN `__sd_unmodified__fivetran_active`
        THEN NULL
        ELSE ARRAY(`_fivetran_active`)
      END AS `_fivetran_active`,
      CASE
        WHEN `__sd_unmodified__fivetran_synced`
        THEN NULL
        ELSE ARRAY(`_fivetran_synced`)
      END AS `_fivetran_synced`,
      `__sd_op`,
      `__sd_seq`
    FROM `sd_batch`
  ), `__sd_all` AS (
    SELECT
      `id`,
      `region`,
      `_fivetran_start`,
      `amount`,
      `note``s`,
      `_fivetran_end`,
      `_fivetran_active`,
      `_fivetran_synced`,
      `__sd_op`,
      `__sd_seq`,
      CASE WHEN `__sd_op` IN ('update', 'upsert') THEN 1 ELSE 2 END AS `__sd_order`
    FROM `__sd_rows`
    UNION ALL
    SELECT
      `id`,
      `region`,
      `_fivetran_start`,
      ARRAY(`amount`) AS `amount`,
      ARRAY(`note``s`) AS `note``s`,
      ARRAY(`_fivetran_end`) AS `_fivetran_end`,
      ARRAY(`_fivetran_active`) AS `_fivetran_active`,
      ARRAY(`_fivetran_synced`) AS `_fivetran_synced`,
      NULL AS `__sd_op`,
      -1 AS `__sd_seq`,
      0 AS `__sd_order`
    FROM `lake`.`sales`.`orders_history`
    WHERE
      (`id`, `region`) IN (
        SELECT
          `id`,
          `region`
        FROM `__sd_rows`
      )
      AND `id` IN (
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
  ), `__sd_windowed` AS (
    SELECT
      *,
      LEAST(
        MIN(CASE WHEN `__sd_op` IN ('earliest_start') THEN `_fivetran_start` END) OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
        ),
        MIN(CASE WHEN `__sd_op` IN ('update', 'upsert') THEN `_fivetran_start` END) OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
        )
      ) AS `__sd_earliest`,
      MAX(CASE WHEN `__sd_op` IN ('delete') THEN ELEMENT_AT(`_fivetran_end`, 1) END) OVER (
        PARTITION BY `id`, `region`
        ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
        ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
      ) AS `__sd_deleted_at`,
      ROW_NUMBER() OVER (
        PARTITION BY `id`, `region`
        ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
      ) AS `__sd_pos`,
      LEAD(`__sd_order`, 1, -1) OVER (
        PARTITION BY `id`, `region`
        ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
      ) AS `__sd_next_order`,
      LEAD(`_fivetran_start`) OVER (
        PARTITION BY `id`, `region`
        ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
      ) AS `__sd_next_start`
    FROM `__sd_all`
  ), `__sd_based` AS (
    SELECT
      *,
      `__sd_earliest` IS NULL OR `_fivetran_start` < `__sd_earliest` AS `__sd_survives`,
      MAX(
        CASE
          WHEN `__sd_order` = 0
          AND (
            `__sd_earliest` IS NULL OR `_fivetran_start` < `__sd_earliest`
          )
          THEN `__sd_pos`
        END
      ) OVER (
        PARTITION BY `id`, `region`
        ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
        ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
      ) AS `__sd_base`
    FROM `__sd_windowed`
  ), `__sd_filled` AS (
    SELECT
      `id`,
      `region`,
      `_fivetran_start`,
      ELEMENT_AT(
        LAST(CASE WHEN `__sd_order` = 1 OR `__sd_pos` = `__sd_base` THEN `amount` END) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `amount`,
      ELEMENT_AT(
        LAST(CASE WHEN `__sd_order` = 1 OR `__sd_pos` = `__sd_base` THEN `note``s` END) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `note``s`,
      ELEMENT_AT(
        LAST(CASE WHEN `__sd_order` = 1 OR `__sd_pos` = `__sd_base` THEN `_fivetran_end` END) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `_fivetran_end`,
      ELEMENT_AT(
        LAST(
          CASE WHEN `__sd_order` = 1 OR `__sd_pos` = `__sd_base` THEN `_fivetran_active` END
        ) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `_fivetran_active`,
      ELEMENT_AT(
        LAST(
          CASE WHEN `__sd_order` = 1 OR `__sd_pos` = `__sd_base` THEN `_fivetran_synced` END
        ) IGNORE NULLS OVER (
          PARTITION BY `id`, `region`
          ORDER BY `__sd_order` NULLS LAST, `_fivetran_start` NULLS LAST, `__sd_seq` NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ),
        1
      ) AS `_fivetran_synced`,
      ELEMENT_AT(`_fivetran_end`, 1) AS `__sd_stored__fivetran_end`,
      ELEMENT_AT(`_fivetran_active`, 1) AS `__sd_stored__fivetran_active`,
      `__sd_order`,
      `__sd_earliest`,
      `__sd_deleted_at`,
      `__sd_survives`,
      `__sd_pos`,
      `__sd_base`,
      `__sd_order` = 1
      AND NOT (
        `__sd_next_order` = 1 AND `__sd_next_start` = `_fivetran_start`
      ) AS `__sd_last`
    FROM `__sd_based`
  )
  SELECT
    `id`,
    `region`,
    `_fivetran_start`,
    CASE WHEN `__sd_order` = 1 THEN `amount` ELSE NULL END AS `amount`,
    CASE WHEN `__sd_order` = 1 THEN `note``s` ELSE NULL END AS `note``s`,
    CASE
      WHEN `__sd_order` = 1
      THEN CASE
        WHEN NOT `__sd_deleted_at` IS NULL AND `_fivetran_active`
        THEN `__sd_deleted_at`
        ELSE `_fivetran_end`
      END
      ELSE CASE
        WHEN NOT `__sd_earliest` IS NULL
        THEN `__sd_earliest` - INTERVAL '1' MILLISECOND
        ELSE `__sd_deleted_at`
      END
    END AS `_fivetran_end`,
    CASE
      WHEN `__sd_order` = 1
      THEN CASE WHEN NOT `__sd_deleted_at` IS NULL THEN FALSE ELSE `_fivetran_active` END
      ELSE FALSE
    END AS `_fivetran_active`,
    CASE WHEN `__sd_order` = 1 THEN `_fivetran_synced` ELSE NULL END AS `_fivetran_synced`,
    CASE
      WHEN `__sd_order` = 1
      THEN 'insert'
      WHEN `__sd_survives`
      THEN 'close'
      ELSE 'delete'
    END AS `__sd_action`
  FROM `__sd_filled`
  WHERE
    (
      `__sd_order` = 1 AND `__sd_last`
    )
    OR (
      `__sd_order` = 0
      AND (
        NOT `__sd_survives`
        OR (
          NOT `__sd_earliest` IS NULL
          AND (
            `__sd_stored__fivetran_active`
            OR (
              `__sd_pos` = `__sd_base` AND `__sd_stored__fivetran_end` >= `__sd_earliest`
            )
          )
        )
        OR (
          `__sd_earliest` IS NULL
          AND NOT `__sd_deleted_at` IS NULL
          AND `__sd_stored__fivetran_active`
        )
      )
    )
) AS `s`
ON (
  `t`.`id` = `s`.`id`
  AND `t`.`region` = `s`.`region`
  AND `t`.`_fivetran_start` = `s`.`_fivetran_start`
)
AND `s`.`__sd_action` <> 'insert'
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
WHEN MATCHED AND `s`.`__sd_action` = 'delete' THEN DELETE
WHEN MATCHED THEN UPDATE SET
  `t`.`_fivetran_end` = `s`.`_fivetran_end`,
  `t`.`_fivetran_active` = `s`.`_fivetran_active`
WHEN NOT MATCHED AND `s`.`__sd_action` = 'insert' THEN INSERT (
  `id`,
  `region`,
  `amount`,
  `note``s`,
  `_fivetran_start`,
  `_fivetran_end`,
  `_fivetran_active`,
  `_fivetran_synced`
) VALUES (
  `s`.`id`,
  `s`.`region`,
  `s`.`amount`,
  `s`.`note``s`,
  `s`.`_fivetran_start`,
  `s`.`_fivetran_end`,
  `s`.`_fivetran_active`,
  `s`.`_fivetran_synced`
)
