SELECT
  COUNT_IF(NOT `code` IS NULL AND TRY_CAST(`code` AS INT) IS NULL) AS `bad_count_0`,
  MIN(
    CASE
      WHEN NOT `code` IS NULL AND TRY_CAST(`code` AS INT) IS NULL
      THEN CAST(`code` AS STRING)
    END
  ) AS `bad_value_0`,
  COUNT_IF(
    NOT `amount` IS NULL
    AND (
      TRY_CAST(`amount` AS BIGINT) IS NULL
      OR CAST(TRY_CAST(`amount` AS BIGINT) AS DOUBLE) <> `amount`
    )
  ) AS `bad_count_1`,
  MIN(
    CASE
      WHEN NOT `amount` IS NULL
      AND (
        TRY_CAST(`amount` AS BIGINT) IS NULL
        OR CAST(TRY_CAST(`amount` AS BIGINT) AS DOUBLE) <> `amount`
      )
      THEN CAST(`amount` AS STRING)
    END
  ) AS `bad_value_1`,
  COUNT_IF(NOT `price` IS NULL AND TRY_CAST(`price` AS DECIMAL(10, 2)) IS NULL) AS `bad_count_2`,
  MIN(
    CASE
      WHEN NOT `price` IS NULL AND TRY_CAST(`price` AS DECIMAL(10, 2)) IS NULL
      THEN CAST(`price` AS STRING)
    END
  ) AS `bad_value_2`,
  COUNT_IF(
    NOT `ratio` IS NULL
    AND (
      TRY_CAST(`ratio` AS FLOAT) IS NULL
      OR (
        ABS(CAST(TRY_CAST(`ratio` AS FLOAT) AS DOUBLE)) = CAST('Infinity' AS DOUBLE)
        AND ABS(CAST(`ratio` AS DOUBLE)) <> CAST('Infinity' AS DOUBLE)
      )
    )
  ) AS `bad_count_3`,
  MIN(
    CASE
      WHEN NOT `ratio` IS NULL
      AND (
        TRY_CAST(`ratio` AS FLOAT) IS NULL
        OR (
          ABS(CAST(TRY_CAST(`ratio` AS FLOAT) AS DOUBLE)) = CAST('Infinity' AS DOUBLE)
          AND ABS(CAST(`ratio` AS DOUBLE)) <> CAST('Infinity' AS DOUBLE)
        )
      )
      THEN CAST(`ratio` AS STRING)
    END
  ) AS `bad_value_3`,
  COUNT_IF(
    NOT `flag` IS NULL
    AND (
      TRY_CAST(`flag` AS BOOLEAN) IS NULL
      OR CAST(TRY_CAST(`flag` AS BOOLEAN) AS INT) <> `flag`
    )
  ) AS `bad_count_4`,
  MIN(
    CASE
      WHEN NOT `flag` IS NULL
      AND (
        TRY_CAST(`flag` AS BOOLEAN) IS NULL
        OR CAST(TRY_CAST(`flag` AS BOOLEAN) AS INT) <> `flag`
      )
      THEN CAST(`flag` AS STRING)
    END
  ) AS `bad_value_4`,
  COUNT_IF(
    NOT `day` IS NULL
    AND (
      TRY_CAST(`day` AS DATE) IS NULL
      OR CAST(TRY_CAST(`day` AS DATE) AS TIMESTAMP) <> `day`
    )
  ) AS `bad_count_5`,
  MIN(
    CASE
      WHEN NOT `day` IS NULL
      AND (
        TRY_CAST(`day` AS DATE) IS NULL
        OR CAST(TRY_CAST(`day` AS DATE) AS TIMESTAMP) <> `day`
      )
      THEN CAST(`day` AS STRING)
    END
  ) AS `bad_value_5`,
  COUNT_IF(NOT `local``at` IS NULL AND TRY_CAST(`local``at` AS TIMESTAMP_NTZ) IS NULL) AS `bad_count_6`,
  MIN(
    CASE
      WHEN NOT `local``at` IS NULL AND TRY_CAST(`local``at` AS TIMESTAMP_NTZ) IS NULL
      THEN CAST(`local``at` AS STRING)
    END
  ) AS `bad_value_6`,
  COUNT_IF(NOT `on day` IS NULL AND TRY_CAST(`on day` AS TIMESTAMP) IS NULL) AS `bad_count_7`,
  MIN(
    CASE
      WHEN NOT `on day` IS NULL AND TRY_CAST(`on day` AS TIMESTAMP) IS NULL
      THEN CAST(`on day` AS STRING)
    END
  ) AS `bad_value_7`,
  COUNT_IF(NOT `small` IS NULL AND TRY_CAST(`small` AS SMALLINT) IS NULL) AS `bad_count_8`,
  MIN(
    CASE
      WHEN NOT `small` IS NULL AND TRY_CAST(`small` AS SMALLINT) IS NULL
      THEN CAST(`small` AS STRING)
    END
  ) AS `bad_value_8`,
  COUNT_IF(
    NOT `at.time` IS NULL
    AND NOT `at.time` RLIKE '^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,9})?)?$'
  ) AS `bad_count_9`,
  MIN(
    CASE
      WHEN NOT `at.time` IS NULL
      AND NOT `at.time` RLIKE '^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,9})?)?$'
      THEN CAST(`at.time` AS STRING)
    END
  ) AS `bad_value_9`,
  COUNT_IF(`code` IS NULL) AS `null_count_0`,
  COUNT_IF(CAST(NULL AS STRING) IS NULL) AS `null_count_1`
FROM `lake`.`sales`.`orders`
