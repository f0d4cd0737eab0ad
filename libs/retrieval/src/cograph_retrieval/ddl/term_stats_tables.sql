-- cograph_retrieval/ddl/term_stats_tables.sql: the BM25 term statistics of one chunk table, as
-- HybridRetriever reads them (ChunkTable.term_stats, ChunkTable.scope_stats): the document
-- frequency of each lexeme per scope, and the chunks and lexemes each scope holds.
CREATE TABLE {{term_stats}} (scope_id uuid NOT NULL, lexeme text NOT NULL, df bigint NOT NULL,
                              PRIMARY KEY (scope_id, lexeme));
CREATE TABLE {{scope_stats}} (scope_id uuid PRIMARY KEY, chunks bigint NOT NULL, lexemes bigint NOT NULL);
