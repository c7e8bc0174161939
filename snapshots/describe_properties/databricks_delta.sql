SHOW TBLPROPERTIES `lake`.`my-schema.v2`.`order ``items`` 2024`
