-- Term statistics follow UPDATEs too. A re-sync rewrites the signature of a code node that
-- survived an edit, and with it the generated search_text: its new lexemes were never counted
-- and its old ones never taken away. Only rows whose search_text or scope changed move the
-- statistics (an embedding written back changes neither); a statement trigger with transition
-- tables cannot name its columns (UPDATE OF), hence the comparison inside. Arguments as for
-- term_stats(): the statistics table, the scope statistics table, the scope column.
-- equivalent-to: sha256:624933be6acc3d870bd7377469a23b95e64ddd0954da5b89df46ae692e5ef451 (its DDL written out)
-- include: cograph_retrieval/ddl/term_stats_update_function.sql

-- include: cograph_retrieval/ddl/term_stats_update_trigger.sql table=code_nodes scope_column=repository_id term_stats=code_term_stats scope_stats=code_scope_stats
-- Nothing updates a document chunk's text today (a changed document gets new chunks), but the
-- statistics must not depend on that staying true.
-- include: cograph_retrieval/ddl/term_stats_update_trigger.sql table=repo_document_chunks scope_column=repository_id term_stats=repo_term_stats scope_stats=repo_scope_stats

-- The code statistics have drifted wherever a sync rewrote a signature: counted again from the rows.
-- The lock makes writers' triggers wait until the recount is committed, then add to it.
LOCK TABLE code_term_stats, code_scope_stats IN EXCLUSIVE MODE;
DELETE FROM code_term_stats;
DELETE FROM code_scope_stats;
-- include: cograph_retrieval/ddl/term_stats_count.sql table=code_nodes scope_column=repository_id term_stats=code_term_stats scope_stats=code_scope_stats
