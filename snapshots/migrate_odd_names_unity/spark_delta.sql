-- 1. set properties of 'order-`items`'
ALTER TABLE `spark_catalog`.`sales`.`order-``items```
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"k`ey","primary_key":true,"type":"STRING"},{"name":"va.lue","type":"INT"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"new `col`","type":"INT"}]'
  );

-- 2. map the column names of 'order-`items`'
ALTER TABLE `spark_catalog`.`sales`.`order-``items```
SET 
TBLPROPERTIES (
  'delta.columnMapping.mode'='name'
);

-- 3. add 1 column(s) to 'order-`items`'
ALTER TABLE `spark_catalog`.`sales`.`order-``items```
ADD COLUMNS (
  `new ``col``` INT
);

-- 4. set column 'new `col`' of 'order-`items`'
UPDATE `spark_catalog`.`sales`.`order-``items``` SET `new ``col``` = `va.lue`;
