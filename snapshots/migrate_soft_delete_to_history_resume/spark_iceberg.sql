-- 1. create table 'orders'
CREATE TABLE `lake`.`sales`.`orders` (
  `id` INT NOT NULL,
  `region` STRING,
  `amount` DOUBLE,
  `desc` STRING,
  `_fivetran_synced` TIMESTAMP,
  `_fivetran_start` TIMESTAMP NOT NULL,
  `_fivetran_end` TIMESTAMP,
  `_fivetran_active` BOOLEAN
)
USING ICEBERG
TBLPROPERTIES (
  'format-version'='2',
  'write.delete.mode'='merge-on-read',
  'write.update.mode'='merge-on-read',
  'write.merge.mode'='merge-on-read',
  'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"region","type":"STRING"},{"name":"amount","type":"DOUBLE"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_start","primary_key":true,"type":"UTC_DATETIME"},{"name":"_fivetran_end","type":"UTC_DATETIME"},{"name":"_fivetran_active","type":"BOOLEAN"}]'
);

-- 2. set identifier fields of 'orders'
ALTER TABLE `lake`.`sales`.`orders` SET IDENTIFIER FIELDS `id`, `_fivetran_start`;

-- 3. copy the rows of 'orders__sd_migrating' into 'orders'
INSERT OVERWRITE TABLE `lake`.`sales`.`orders`
SELECT
  `id`,
  `region`,
  `amount`,
  `desc`,
  `_fivetran_synced`,
  `_fivetran_start`,
  `_fivetran_end`,
  `_fivetran_active`
FROM `lake`.`sales`.`orders__sd_migrating`;

-- 4. drop table 'orders__sd_migrating'
DROP TABLE IF EXISTS `lake`.`sales`.`orders__sd_migrating`;
