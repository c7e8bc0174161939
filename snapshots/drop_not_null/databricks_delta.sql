ALTER TABLE `lake`.`my-schema.v2`.`order ``items`` 2024`
ALTER COLUMN `region ``code``` DROP NOT NULL
