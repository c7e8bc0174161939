ALTER TABLE `lake`.`my-schema.v2`.`order ``items`` 2024`
ALTER COLUMN `amount` TYPE DECIMAL(20, 2)
