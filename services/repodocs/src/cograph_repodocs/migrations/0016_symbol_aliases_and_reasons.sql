-- Symbols docs cite beyond functions and classes (modules, variables, class attributes, properties),
-- the names a module re-exports (`from .fields import Field` in a package's __init__), and why a
-- mention resolved to the node it links to. The next sync parses every source file again: the
-- stored file hashes now fold in the extraction's version, which no hash stored before carries.
ALTER TABLE code_nodes DROP CONSTRAINT code_nodes_kind_check;
ALTER TABLE code_nodes ADD CONSTRAINT code_nodes_kind_check CHECK (
    kind IN ('function', 'class', 'method', 'type', 'interface', 'constant',
             'module', 'variable', 'attribute', 'property')
);

CREATE TABLE code_aliases (
    repository_id uuid NOT NULL,
    path text NOT NULL,
    name text NOT NULL,
    target text NOT NULL,
    public boolean NOT NULL,
    FOREIGN KEY (repository_id, path) REFERENCES code_files ON DELETE CASCADE
);
CREATE INDEX code_aliases_file ON code_aliases (repository_id, path);

ALTER TABLE repo_document_chunk_mentions DROP CONSTRAINT repo_document_chunk_mentions_form_check;
ALTER TABLE repo_document_chunk_mentions ADD CONSTRAINT repo_document_chunk_mentions_form_check CHECK (
    form IN ('backtick', 'dotted', 'call', 'reference')
);
-- NULL for links stored before, until their chunks are linked again.
ALTER TABLE repo_document_chunk_mentions ADD COLUMN reason text CHECK (
    reason IN ('explicit_target', 'document_import', 'heading_context', 'text_context',
               'unique_public', 'qualified_name', 'same_file', 'name_match')
);
