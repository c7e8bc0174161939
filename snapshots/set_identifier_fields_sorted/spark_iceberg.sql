ALTER TABLE `lake`.`sales`.`orders` SET IDENTIFIER FIELDS `id`;

ALTER TABLE `lake`.`sales`.`orders` WRITE LOCALLY ORDERED BY `id`
