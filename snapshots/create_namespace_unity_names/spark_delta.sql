CREATE SCHEMA IF NOT EXISTS `lake`.`my-schema`
