-- Identifiers as the indexed languages write them: '$' (JavaScript's $http, Vue's $route) and
-- letters outside ASCII (Python's größe_berechnen) are part of a name, not separators that cut
-- it into fragments. What separates: ASCII other than letters, digits and '_' '$' '.', and the
-- spaces, punctuation and symbols of Latin-1, general punctuation, arrows and operators, CJK
-- punctuation and full-width punctuation, written out (under the C locale PostgreSQL's character
-- classes see no letter, and no space, beyond ASCII), leaving out what may stand in an identifier:
-- letters (ª µ º 々 〆 〇, the kana repeat marks), numerals (〡-〩, 〸-〺), joiners and connectors (· ‿ ⁀ ⁔ ＿).
CREATE OR REPLACE FUNCTION identifier_lexemes(source text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY(
    SELECT DISTINCT lower(word) FROM (
        -- dotted names as written: app.Vue2Router.$route
        SELECT trim(BOTH '.' FROM token) AS word
        FROM regexp_split_to_table(source,
            '[\x01-\x23\x25-\x2d\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f\u00a0-\u00a9\u00ab-\u00b4\u00b6\u00b8\u00b9\u00bb-\u00bf\u00d7\u00f7\u2000-\u200b\u200e-\u203e\u2041-\u2053\u2055-\u206f\u2190-\u22ff\u3000-\u3004\u3008-\u3020\u3030\u3036\u3037\u303d-\u303f\ufeff\uff01-\uff0f\uff1a-\uff20\uff3b-\uff3e\uff40\uff5b-\uff65]+') AS token
        UNION ALL
        -- their parts: $route, snake_case
        SELECT token FROM regexp_split_to_table(source,
            '[\x01-\x23\x25-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f\u00a0-\u00a9\u00ab-\u00b4\u00b6\u00b8\u00b9\u00bb-\u00bf\u00d7\u00f7\u2000-\u200b\u200e-\u203e\u2041-\u2053\u2055-\u206f\u2190-\u22ff\u3000-\u3004\u3008-\u3020\u3030\u3036\u3037\u303d-\u303f\ufeff\uff01-\uff0f\uff1a-\uff20\uff3b-\uff3e\uff40\uff5b-\uff65]+') AS token
        UNION ALL
        -- camelCase and snake_case parts: route, snake, case
        SELECT token FROM regexp_split_to_table(
            regexp_replace(regexp_replace(source, '([a-z0-9])([A-Z])', '\1 \2', 'g'),
                           '([A-Z]+)([A-Z][a-z])', '\1 \2', 'g'),
            '[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\u00a0-\u00a9\u00ab-\u00b4\u00b6\u00b8\u00b9\u00bb-\u00bf\u00d7\u00f7\u2000-\u200b\u200e-\u203e\u2041-\u2053\u2055-\u206f\u2190-\u22ff\u3000-\u3004\u3008-\u3020\u3030\u3036\u3037\u303d-\u303f\ufeff\uff01-\uff0f\uff1a-\uff20\uff3b-\uff3e\uff40\uff5b-\uff65]+') AS token
    ) words
    WHERE length(word) > 1);

-- The stored lexemes (a generated column) and their statistics (update triggers) follow; only
-- the rows whose lexemes change are written (each write also re-indexes the row's vector).
UPDATE code_nodes SET qualified_name = qualified_name
WHERE search_text IS DISTINCT FROM array_to_tsvector(identifier_lexemes(qualified_name || ' ' || kind || ' ' || signature));
