DESCRIBE DETAIL `lake`.`my-schema`.`order-``items``-2024`
