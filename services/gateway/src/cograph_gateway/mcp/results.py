"""What MCP tools answer: compact, agent-oriented views of the operations' results, each citing its
source. They are projections of the REST result types (cograph_gateway.schemas) that the
operations answer, never built from protobuf, so both faces say the same thing."""

from __future__ import annotations

from typing import Any

import msgspec
from pydantic import BaseModel, Field

from cograph_gateway import schemas as s
from cograph_gateway.convert import collection_citation


class Pool(BaseModel):
    store: str
    confidence: float = Field(description="The pool's best score scaled to 0..1, for comparing pools.")


class Ranks(BaseModel):
    """Where each retrieval stream placed the hit: 1 is first, 0 is not found by that stream."""

    dense: int = Field(description="Rank by meaning (embedding similarity).")
    text: int = Field(description="Rank by the query's words (BM25 full text).")

    @classmethod
    def of(cls, ranks: s.CollectionStreamRanks | s.CodeStreamRanks) -> Ranks:
        return cls(dense=ranks.dense, text=ranks.text)


class CodeRanks(Ranks):
    symbol: int = Field(description="Rank by an exact symbol name in the query.")


class CollectionHit(BaseModel):
    citation: str = Field(description="collection/<collection id>#<section anchor>")
    collection_id: str
    document_id: str
    chunk_id: str
    document_title: str
    source_key: str
    heading_path: list[str]
    score: float
    ranks: Ranks
    content: str


class RepoDocHit(BaseModel):
    citation: str = Field(description="<repository>:<page slug>#<heading anchor>")
    repository: str = Field(description="host/owner/name")
    document_id: str
    chunk_id: str
    document_title: str
    path: str
    slug: str
    heading: str = Field(description="The chunk's deepest heading")
    heading_path: list[str]
    kind: str
    score: float | None = Field(default=None, description="Null for the related docs of a code hit.")
    ranks: Ranks | None = Field(default=None, description="Null for the related docs of a code hit.")
    content: str


class CodeHit(BaseModel):
    citation: str = Field(description="<repository>:<path>#L<start>-L<end>")
    repository: str
    node_id: str
    name: str
    qualified_name: str
    kind: str
    language: str
    path: str
    start_line: int
    end_line: int
    signature: str
    score: float
    ranks: CodeRanks
    related_repo_doc_chunks: list[RepoDocHit] = Field(description="Doc chunks that discuss this symbol.")


class RetrieveResult(BaseModel):
    mode: str
    code: list[CodeHit]
    docs: list[RepoDocHit]
    failures: list[str] = Field(description="Stores that failed; the other results are still valid.")


class RouteResult(BaseModel):
    pools: list[Pool]
    code: list[CodeHit]
    repo_docs: list[RepoDocHit]
    collections: list[CollectionHit]
    failures: list[str]


class CollectionInfo(BaseModel):
    citation: str = Field(description="collection/<id>")
    id: str
    name: str
    description: str
    visibility: str
    owner: str
    document_count: int
    chunk_count: int


class CollectionList(BaseModel):
    collections: list[CollectionInfo]
    next_page_token: str | None = Field(description="Pass as page_token for more; null on the last page.")


class CollectionSearchResult(BaseModel):
    collection_id: str
    hits: list[CollectionHit]
    failures: list[str]


class CollectionDocument(BaseModel):
    citation: str
    id: str
    collection_id: str
    source_key: str
    title: str
    content: str = Field(description="The whole document, untruncated.")
    metadata: dict[str, Any] = Field(
        description="frontmatter, title, heading_tree, code_blocks, tables, links, word_count, line_count"
    )


class ChunkText(BaseModel):
    citation: str
    chunk_id: str
    document_id: str
    source: str = Field(description="collection/<id> or the repository host/owner/name")
    title: str = Field(description="The source key (collections) or file path (repositories)")
    heading_path: list[str]
    chunk_index: int
    content: str


class FileText(BaseModel):
    citation: str = Field(description="<repository>@<commit>:<path>#L<start>-L<end>")
    repository: str
    path: str
    language: str
    commit_sha: str
    start_line: int
    end_line: int
    total_lines: int
    content: str


def collection_hit(hit: s.ChunkHit) -> CollectionHit:
    chunk = hit.chunk
    return CollectionHit(
        citation=chunk.citation,
        collection_id=chunk.collection_id,
        document_id=chunk.document_id,
        chunk_id=chunk.id,
        document_title=hit.document_title,
        source_key=chunk.source_key,
        heading_path=chunk.heading_path,
        score=hit.score,
        ranks=Ranks.of(hit.ranks),
        content=chunk.content,
    )


def repo_doc(
    chunk: s.RepoChunk, title: str, repos: dict[str, str], hit: s.DocChunkHit | None = None
) -> RepoDocHit:
    repository = repos.get(chunk.repository_id, chunk.repository_id)
    return RepoDocHit(
        # As code hits cite theirs: a slug alone is ambiguous across repositories (every README).
        citation=f"{repository}:{chunk.citation}",
        repository=repository,
        document_id=chunk.document_id,
        chunk_id=chunk.id,
        document_title=title,
        path=chunk.path,
        slug=chunk.slug,
        heading=chunk.heading_path[-1] if chunk.heading_path else title,
        heading_path=chunk.heading_path,
        kind=chunk.kind,
        score=hit.score if hit else None,
        ranks=Ranks.of(hit.ranks) if hit else None,
        content=chunk.content,
    )


def code_hit(result: s.CodeResult, repos: dict[str, str]) -> CodeHit:
    node = result.node
    repository = repos.get(node.repository_id, node.repository_id)
    return CodeHit(
        citation=f"{repository}:{node.path}#L{node.start_line}-L{node.end_line}",
        repository=repository,
        node_id=node.id,
        name=node.name,
        qualified_name=node.qualified_name,
        kind=node.kind,
        language=node.language,
        path=node.path,
        start_line=node.start_line,
        end_line=node.end_line,
        signature=node.signature,
        score=result.score,
        ranks=CodeRanks(dense=result.ranks.dense, text=result.ranks.text, symbol=result.ranks.symbol),
        related_repo_doc_chunks=[
            repo_doc(r.chunk, r.document_title, repos) for r in result.related_repo_doc_chunks
        ],
    )


def failures(found: list[s.StoreFailure]) -> list[str]:
    return [f"{f.store}: {f.message}" for f in found]


def collection_info(collection: s.Collection) -> CollectionInfo:
    return CollectionInfo(
        citation=collection_citation(collection.id),
        id=collection.id,
        name=collection.name,
        description=collection.description,
        visibility=collection.visibility,
        owner=collection.owner,
        document_count=collection.document_count,
        chunk_count=collection.chunk_count,
    )


def collection_document(document: s.Document) -> CollectionDocument:
    return CollectionDocument(
        citation=collection_citation(document.collection_id, ""),
        id=document.id,
        collection_id=document.collection_id,
        source_key=document.source_key,
        title=document.title,
        content=document.content,
        metadata=_to_builtins(document.metadata),
    )


def collection_chunk(chunk: s.Chunk) -> ChunkText:
    return _chunk_text(chunk, chunk.citation, f"collection/{chunk.collection_id}", chunk.source_key)


def repository_chunk(repository: str, chunk: s.RepoChunk) -> ChunkText:
    # Cited as the search hit that led here cites it.
    return _chunk_text(chunk, f"{repository}:{chunk.citation}", repository, chunk.path)


def _chunk_text(chunk: s.Chunk | s.RepoChunk, citation: str, source: str, title: str) -> ChunkText:
    return ChunkText(
        citation=citation,
        chunk_id=chunk.id,
        document_id=chunk.document_id,
        source=source,
        title=title,
        heading_path=chunk.heading_path,
        chunk_index=chunk.chunk_index,
        content=chunk.content,
    )


def file_text(repository: str, text: s.FileRange) -> FileText:
    return FileText(
        citation=f"{repository}@{text.commit_sha[:12]}:{text.path}#L{text.start_line}-L{text.end_line}",
        repository=repository,
        path=text.path,
        language=text.language,
        commit_sha=text.commit_sha,
        start_line=text.start_line,
        end_line=text.end_line,
        total_lines=text.total_lines,
        content=text.content,
    )


def _to_builtins(value: Any) -> dict[str, Any]:
    result = msgspec.to_builtins(value)
    assert isinstance(result, dict)
    return result
