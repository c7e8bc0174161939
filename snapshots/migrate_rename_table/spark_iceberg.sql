-- 1. create table 'orders_new'
CREATE TABLE `lake`.`sales`.`orders_new` (
  `id` INT NOT NULL,
  `amount` DECIMAL(10, 2),
  `n` SMALLINT,
  `desc` STRING,
  `_fivetran_synced` TIMESTAMP,
  `_fivetran_deleted` BOOLEAN
)
USING ICEBERG
TBLPROPERTIES (
  'format-version'='2',
  'write.delete.mode'='merge-on-read',
  'write.update.mode'='merge-on-read',
  'write.merge.mode'='merge-on-read',
  'write.parquet.row-group-size-bytes'='4194304',
  'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"amount","precision":10,"scale":2,"type":"DECIMAL"},{"name":"n","type":"SHORT"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_deleted","type":"BOOLEAN"}]'
);

-- 2. set identifier fields of 'orders_new'
ALTER TABLE `lake`.`sales`.`orders_new` SET IDENTIFIER FIELDS `id`;

-- 3. copy the rows of 'orders' into 'orders_new'
INSERT OVERWRITE TABLE `lake`.`sales`.`orders_new`
SELECT
  `id`,
  `amount`,
  `n`,
  `desc`,
  `_fivetran_synced`,
  `_fivetran_deleted`
FROM `lake`.`sales`.`orders`;

-- 4. drop table 'orders'
DROP TABLE IF EXISTS `lake`.`sales`.`orders`;
