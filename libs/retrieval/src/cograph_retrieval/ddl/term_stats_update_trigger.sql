-- cograph_retrieval/ddl/term_stats_update_trigger.sql: term_stats_update() on one chunk table's
-- updates.
CREATE TRIGGER {{table}}_stats_update AFTER UPDATE ON {{table}}
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION term_stats_update('{{term_stats}}', '{{scope_stats}}', '{{scope_column}}');
