-- 1. create table 'orders_new'
CREATE TABLE `spark_catalog`.`sales`.`orders_new` (
  `id` INT NOT NULL,
  `amount` DECIMAL(10, 2),
  `n` SMALLINT,
  `desc` STRING,
  `_fivetran_synced` TIMESTAMP,
  `_fivetran_deleted` BOOLEAN
)
USING DELTA
TBLPROPERTIES (
  'delta.feature.timestampNtz'='supported',
  'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"n","type":"SHORT"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"}]'
);

-- 2. copy the rows of 'orders' into 'orders_new'
INSERT OVERWRITE TABLE `spark_catalog`.`sales`.`orders_new`
SELECT
  `id`,
  `amount`,
  `n`,
  `desc`,
  `_fivetran_synced`,
  `_fivetran_deleted`
FROM `spark_catalog`.`sales`.`orders`;

-- 3. drop table 'orders'
DROP TABLE IF EXISTS `spark_catalog`.`sales`.`orders`;
