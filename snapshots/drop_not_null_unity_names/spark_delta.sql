ALTER TABLE `lake`.`my-schema`.`order-``items``-2024`
ALTER COLUMN `region ``code``` DROP NOT NULL
