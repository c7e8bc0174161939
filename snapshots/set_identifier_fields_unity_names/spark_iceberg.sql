ALTER TABLE `lake`.`my-schema`.`order-``items``-2024` SET IDENTIFIER FIELDS `id`, `at``time`
