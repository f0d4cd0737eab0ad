-- cograph_retrieval/ddl/chunk_windows.sql: the vectors of a chunk's windows after its first
-- (ChunkTable.windows), for a chunk longer than the model's input: the chunk's own row holds
-- the first window's vector, this table the others, made by the same model and recipe in the
-- same transaction. The dense stream scores a chunk by its nearest window. `embedding_recipe`
-- says what text the chunk's vectors were made of (cograph_retrieval.passages.RECIPE).
ALTER TABLE {{table}} ADD COLUMN embedding_recipe text;
CREATE TABLE {{windows}} (
    chunk_id uuid NOT NULL REFERENCES {{table}} (id) ON DELETE CASCADE,
    window_index integer NOT NULL CHECK (window_index >= 1),
    {{scope_column}} uuid NOT NULL,
    embedding vector NOT NULL,
    embedding_model text NOT NULL,
    embedding_dim integer NOT NULL,
    PRIMARY KEY (chunk_id, window_index)
);
