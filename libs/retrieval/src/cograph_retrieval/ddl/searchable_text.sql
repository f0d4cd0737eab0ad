-- cograph_retrieval/ddl/searchable_text.sql: text as full text should index it. Its invisible
-- format characters (Unicode category Cf) are dealt with as without_format_characters deals with
-- a query's: a zero-width space or a byte order mark separates words, the others go (soft hyphen,
-- joiners, direction marks, as Python's unicodedata lists them). A Unicode release with new ones
-- fails tests/integration/collections/test_search.py until both know them.
CREATE FUNCTION searchable_text(source text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN regexp_replace(regexp_replace(source, '[\u200b\ufeff]', ' ', 'g'),
    '[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200c-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]', '', 'g');
