ALTER TABLE `lake`.`my-schema.v2`.`order ``items`` 2024` SET IDENTIFIER FIELDS `id`, `at``time`
