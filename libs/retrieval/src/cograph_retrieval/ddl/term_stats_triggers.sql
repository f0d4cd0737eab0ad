-- cograph_retrieval/ddl/term_stats_triggers.sql: term_stats() on one chunk table's inserts and
-- deletes. Statement triggers, so every write path (COPY, cascading deletes) updates the
-- statistics in the same transaction.
CREATE TRIGGER {{table}}_stats_insert AFTER INSERT ON {{table}}
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION term_stats('{{term_stats}}', '{{scope_stats}}', '{{scope_column}}');
CREATE TRIGGER {{table}}_stats_delete AFTER DELETE ON {{table}}
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION term_stats('{{term_stats}}', '{{scope_stats}}', '{{scope_column}}');
