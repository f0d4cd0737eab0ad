-- Identifiers as the indexed languages write them: '$' (JavaScript's $http, Vue's $route) and
-- letters outside ASCII (Python's größe_berechnen) are part of a name, not separators that cut
-- it into fragments. Only ASCII characters other than letters, digits and '_' '$' '.' separate
-- (not a character class: under the C locale PostgreSQL sees no letter beyond ASCII).
CREATE OR REPLACE FUNCTION identifier_lexemes(source text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY(
    SELECT DISTINCT lower(word) FROM (
        -- dotted names as written: app.Vue2Router.$route
        SELECT trim(BOTH '.' FROM token) AS word
        FROM regexp_split_to_table(source, '[\x01-\x23\x25-\x2d\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]+') AS token
        UNION ALL
        -- their parts: $route, snake_case
        SELECT token FROM regexp_split_to_table(source, '[\x01-\x23\x25-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]+') AS token
        UNION ALL
        -- camelCase and snake_case parts: route, snake, case
        SELECT token FROM regexp_split_to_table(
            regexp_replace(regexp_replace(source, '([a-z0-9])([A-Z])', '\1 \2', 'g'),
                           '([A-Z]+)([A-Z][a-z])', '\1 \2', 'g'),
            '[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+') AS token
    ) words
    WHERE length(word) > 1);

-- The stored lexemes (a generated column) and their statistics (update triggers) follow.
UPDATE code_nodes SET qualified_name = qualified_name;
