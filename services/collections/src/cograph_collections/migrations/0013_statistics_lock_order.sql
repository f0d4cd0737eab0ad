-- Term statistics, kept in a lock order that cannot deadlock, and without dead rows.
--
-- Two uploads replacing different documents of one collection deadlocked (one answered 502):
-- each transaction runs the statistics trigger several times (a DELETE of each replaced
-- document's chunks, then the COPY of the new ones), each time locking a different set of
-- lexeme rows, so two transactions could each hold a row the other was waiting for. The
-- collection's md_scope_stats row, which every statement updates anyway, is now locked first:
-- held until commit, it makes the writers of one collection take their turns before either
-- has locked a lexeme.
--
-- A lexeme no chunk holds any more kept its row at df 0, and a deleted collection kept all of
-- its rows: the table only grew. Rows that reach 0 are removed in the statement that empties
-- them (the transaction holds their locks), a deleted collection's scope row with it (see
-- delete_collection), and those already left behind here.

CREATE OR REPLACE FUNCTION md_chunks_stats() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    -- Inserted chunks add to the statistics, deleted ones subtract.
    changed text := CASE WHEN TG_OP = 'INSERT' THEN 'new_rows' ELSE 'old_rows' END;
    sign integer := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
    emptied_scopes uuid[];
    emptied_lexemes text[];
BEGIN
    -- The scope rows first, sorted: the lock that orders the writers of one collection.
    EXECUTE format(
        'INSERT INTO md_scope_stats AS s (scope_id, chunks, lexemes)
         SELECT collection_id, %s * count(*), %s * sum(length(search_text)) FROM %I
         GROUP BY 1 ORDER BY 1
         ON CONFLICT (scope_id) DO UPDATE
         SET chunks = s.chunks + excluded.chunks, lexemes = s.lexemes + excluded.lexemes', sign, sign, changed);
    -- Sorted upserts: concurrent writers of other scopes lock shared rows in the same order.
    EXECUTE format(
        'WITH counted AS (
             INSERT INTO md_term_stats AS t (scope_id, lexeme, df)
             SELECT c.collection_id, u.lexeme, %s * count(*) FROM %I c, unnest(c.search_text) AS u
             GROUP BY 1, 2 ORDER BY 1, 2
             ON CONFLICT (scope_id, lexeme) DO UPDATE SET df = t.df + excluded.df
             RETURNING scope_id, lexeme, df)
         SELECT array_agg(scope_id), array_agg(lexeme) FROM counted WHERE df = 0', sign, changed)
        INTO emptied_scopes, emptied_lexemes;
    IF emptied_lexemes IS NOT NULL THEN
        DELETE FROM md_term_stats t
        USING unnest(emptied_scopes, emptied_lexemes) AS e(scope_id, lexeme)
        WHERE t.scope_id = e.scope_id AND t.lexeme = e.lexeme AND t.df = 0;
    END IF;
    RETURN NULL;
END $$;

DELETE FROM md_term_stats WHERE df = 0 OR scope_id NOT IN (SELECT id FROM md_collections);
DELETE FROM md_scope_stats WHERE scope_id NOT IN (SELECT id FROM md_collections);
