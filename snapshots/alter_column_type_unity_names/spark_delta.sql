ALTER TABLE `lake`.`my-schema`.`order-``items``-2024`
ALTER COLUMN `amount` TYPE DECIMAL(20, 2)
