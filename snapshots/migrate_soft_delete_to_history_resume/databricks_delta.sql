-- 1. drop the primary key of 'orders' if any
ALTER TABLE `lake`.`sales`.`orders`
DROP PRIMARY KEY IF EXISTS;

-- 2. make key column 'id' of 'orders' NOT NULL
ALTER TABLE `lake`.`sales`.`orders`
ALTER COLUMN `id` SET NOT NULL;

-- 3. make key column 'region' of 'orders' NOT NULL
ALTER TABLE `lake`.`sales`.`orders`
ALTER COLUMN `region` SET NOT NULL;

-- 4. make key column '_fivetran_start' of 'orders' NOT NULL
ALTER TABLE `lake`.`sales`.`orders`
ALTER COLUMN `_fivetran_start` SET NOT NULL;

-- 5. set the primary key of 'orders'
ALTER TABLE `lake`.`sales`.`orders`
ADD CONSTRAINT `orders_pk` PRIMARY KEY (`id`, `region`, `_fivetran_start`);

-- 6. make column '_fivetran_end' of 'orders' nullable
ALTER TABLE `lake`.`sales`.`orders`
ALTER COLUMN `_fivetran_end` DROP NOT NULL;

-- 7. make column '_fivetran_active' of 'orders' nullable
ALTER TABLE `lake`.`sales`.`orders`
ALTER COLUMN `_fivetran_active` DROP NOT NULL;

-- 8. set properties of 'orders'
ALTER TABLE `lake`.`sales`.`orders`
  SET 
  TBLPROPERTIES (
    'fivetran.columns'='[{"name":"id","primary_key":true,"type":"INT"},{"name":"region","primary_key":true,"type":"STRING"},{"name":"amount","type":"DOUBLE"},{"name":"desc","type":"STRING"},{"name":"_fivetran_synced","type":"UTC_DATETIME"},{"name":"_fivetran_start","primary_key":true,"type":"UTC_DATETIME"},{"name":"_fivetran_end","type":"UTC_DATETIME"},{"name":"_fivetran_active","type":"BOOLEAN"}]'
  );
