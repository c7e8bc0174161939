ALTER TABLE `lake`.`sales`.`orders`
  ADD COLUMNS (
    `flag` BOOLEAN,
    `small` SMALLINT,
    `count` INT,
    `amount` DECIMAL(18, 4)
  )
