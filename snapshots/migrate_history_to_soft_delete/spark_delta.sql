-- 1. set properties of 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"region","primary_key":true,"type":"STRING"},{"name":"amount","type":"DOUBLE"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_start","primary_key":true,"type":"UTC_DATETIME"},{"name":"_fivetran_end","type":"UTC_DATETIME"},{"name":"_fivetran_active","type":"BOOLEAN"},{"name":"_fivetran_deleted","type":"BOOLEAN"}]'
  );

-- 2. add 1 column(s) to 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
ADD COLUMNS (
  `_fivetran_deleted` BOOLEAN
);

-- 3. keep the latest version per key of 'orders'
MERGE INTO `spark_catalog`.`sales`.`orders` AS `t`
USING (
  SELECT
    `id`,
    `region`,
    `_fivetran_start`,
    `_fivetran_active`,
    ROW_NUMBER() OVER (PARTITION BY `id`, `region` ORDER BY `_fivetran_start` DESC) AS `__sd_rank`
  FROM `spark_catalog`.`sales`.`orders`
) AS `s`
ON `t`.`id` = `s`.`id`
AND `t`.`region` = `s`.`region`
AND `t`.`_fivetran_start` = `s`.`_fivetran_start`
WHEN MATCHED AND `s`.`__sd_rank` > 1 THEN DELETE
WHEN MATCHED THEN UPDATE SET
  `t`.`_fivetran_deleted` = NOT COALESCE(`s`.`_fivetran_active`, FALSE);

-- 4. rewrite 'orders' with the new columns
CREATE OR REPLACE TABLE `spark_catalog`.`sales`.`orders`
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported'
) AS
SELECT
  COALESCE(`id`, CAST(0 AS INT)) AS `id`,
  COALESCE(`region`, '') AS `region`,
  `amount` AS `amount`,
  `desc` AS `desc`,
  `_fivetran_synced` AS `_fivetran_synced`,
  `_fivetran_deleted` AS `_fivetran_deleted`
FROM `spark_catalog`.`sales`.`orders`;

-- 5. set properties of 'orders'
ALTER TABLE `spark_catalog`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"region","primary_key":true,"type":"STRING"},{"name":"amount","type":"DOUBLE"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"}]'
  );
