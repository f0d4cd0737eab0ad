-- Modules, module variables and class attributes carry no vector (EMBEDDED_KINDS in
-- domain/symbols.py): they are indexed for docs to link to and are found by name. The vectors
-- made of them before go, so every node of those kinds is alike.
UPDATE code_nodes SET embedding = NULL, embedding_model = NULL, embedding_dim = NULL
WHERE kind IN ('module', 'variable', 'attribute') AND embedding IS NOT NULL;
