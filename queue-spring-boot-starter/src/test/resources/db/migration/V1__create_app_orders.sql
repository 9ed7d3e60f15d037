-- The application's own migration, run by Spring Boot's Flyway next to pgqueue's migrator.
CREATE TABLE app_orders (
    id    bigint  PRIMARY KEY,
    total numeric NOT NULL
);
