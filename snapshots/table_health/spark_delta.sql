DESCRIBE DETAIL `lake`.`my_schema_v2`.`order_items_2024`
