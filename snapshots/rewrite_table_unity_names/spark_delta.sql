CREATE OR REPLACE TABLE `lake`.`my-schema`.`order-``items``-2024`
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported',
  'delta.columnMapping.mode'='name'
) AS
SELECT
  COALESCE(CAST(`id` AS BIGINT), CAST(0 AS BIGINT)) AS `id`,
  COALESCE(CAST(`code` AS INT), CAST(0 AS INT)) AS `code`,
  CAST(`amount` AS BIGINT) AS `amount`,
  CAST(`price` AS DECIMAL(10, 2)) AS `price`,
  CAST(`ratio` AS FLOAT) AS `ratio`,
  CAST(`flag` AS BOOLEAN) AS `flag`,
  CAST(`day` AS DATE) AS `day`,
  CAST(`local``at` AS TIMESTAMP_NTZ) AS `local``at`,
  CAST(`on day` AS TIMESTAMP) AS `on day`,
  CAST(`small` AS SMALLINT) AS `small`,
  `at.time` AS `at.time`,
  BASE64(`payload`) AS `payload`,
  `doc` AS `doc`,
  CAST(`n` AS STRING) AS `n`,
  COALESCE(CAST(NULL AS STRING), '') AS `region`,
  CAST(NULL AS DECIMAL(12, 3)) AS `added`,
  COALESCE(`d`, DATE_FROM_UNIX_DATE(0)) AS `d`,
  COALESCE(`ts`, CAST(CAST(0 AS TIMESTAMP) AS TIMESTAMP_NTZ)) AS `ts`,
  COALESCE(`b`, X'') AS `b`,
  COALESCE(`ok`, FALSE) AS `ok`,
  COALESCE(`whole`, 0.) AS `whole`
FROM `lake`.`my-schema`.`order-``items``-2024`
