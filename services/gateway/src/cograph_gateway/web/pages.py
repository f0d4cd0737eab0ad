"""The web pages: a third face of the gateway over the same operations as REST and MCP.

Each page reads its form or query, calls operations built for the browser's principal, and renders
a template. Every page works as plain HTML with forms; a refusal is shown as the REST problem's
words with its status, and an unreadable collection answers exactly as REST does (403, or 404).
"""

from __future__ import annotations

from typing import Annotated, Any, get_args

import msgspec
from grpc import aio
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import UploadFile
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.params import Body, FromPath, FromQuery, QueryParameter
from litestar.response import Redirect, Template
from litestar.types import ExceptionHandlersMap

from cograph_gateway import schemas as s
from cograph_gateway.errors import Problem, cut, grpc_status, retry_after
from cograph_gateway.identity import AuthenticationError, KeySetUnavailableError, Principal
from cograph_gateway.operations import Operations
from cograph_gateway.operations.paging import PageRequest
from cograph_gateway.web.render import render_document
from cograph_gateway.web.session import (
    TOKEN_KEY,
    VIEWER_KEY,
    SignInRequired,
    Viewers,
    safe_next,
    sign_in_url,
)

TABS = ("preview", "raw", "metadata", "chunks")
# The most chunks a viewer lists: the collection chunker's cap per document.
MAX_CHUNKS = 512
Form = Body(media_type=RequestEncodingType.URL_ENCODED)


def view(template: str, request: Request[Any, Any, Any], code: int = 200, **context: Any) -> Template:
    """The template rendered for the request's viewer (the header shows who is signed in)."""
    viewer = request.scope.get(VIEWER_KEY)
    return Template(
        template_name=template,
        context={"viewer": viewer, **context},
        status_code=code,
        headers=retry_after(code),
    )


def _refused(request: Request[Any, Any, Any], status: int, detail: str) -> Response[Any]:
    return view("error.html", request, status, status=status, detail=detail)


def problem_page(request: Request[Any, Any, Any], error: Problem) -> Response[Any]:
    return _refused(request, error.status, error.detail)


def service_error_page(request: Request[Any, Any, Any], error: aio.AioRpcError) -> Response[Any]:
    return _refused(request, *grpc_status(error))


def sign_in_page(request: Request[Any, Any, Any], error: SignInRequired) -> Response[Any]:
    return Redirect(sign_in_url(request, error.reason))


# Every page controller's: refusals as pages, a browser that must sign in sent to the sign-in page.
EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    Problem: problem_page,
    aio.AioRpcError: service_error_page,
    SignInRequired: sign_in_page,
}


class DocsPages(Controller):
    """Sign-in, the collections, a collection, a document, the job monitor."""

    include_in_schema = False
    exception_handlers = EXCEPTION_HANDLERS

    @get("/")
    async def home(self) -> Redirect:
        return Redirect("/docs")

    @get("/sign-in")
    async def sign_in_form(
        self, request: Request[Any, Any, Any], next: FromQuery[str] = "/docs", reason: FromQuery[str] = ""
    ) -> Template:
        return view("sign_in.html", request, next=safe_next(next), reason=reason)

    @post("/sign-in", status_code=303)
    async def sign_in(
        self,
        request: Request[Any, Any, Any],
        viewers: NamedDependency[Viewers],
        data: Annotated[dict[str, str], Form],
    ) -> Response[Any]:
        target = safe_next(data.get("next", "/docs"))
        try:
            await viewers.check(data.get("token", ""))
        except (AuthenticationError, KeySetUnavailableError) as error:
            status = 503 if isinstance(error, KeySetUnavailableError) else 401
            return view("sign_in.html", request, status, next=target, reason=str(error))
        request.set_session({TOKEN_KEY: data["token"].strip()})
        return Redirect(target, status_code=303)

    @post("/sign-out", status_code=303)
    async def sign_out(self, request: Request[Any, Any, Any]) -> Redirect:
        request.clear_session()
        return Redirect("/sign-in", status_code=303)

    @get("/docs")
    async def collections(
        self, request: Request[Any, Any, Any], web_ops: NamedDependency[Operations], q: FromQuery[str] = ""
    ) -> Template:
        page = await web_ops.collections.readable(q.strip(), PageRequest(500))
        return view("collections.html", request, collections=page.items, q=q)

    @post("/docs", status_code=303)
    async def create_collection(
        self,
        web_ops: NamedDependency[Operations],
        data: Annotated[dict[str, str], Form],
    ) -> Redirect:
        fields = {key: data.get(key, "").strip() for key in ("name", "description", "visibility")}
        try:  # the REST body's rules, and its words when one is broken
            wanted = msgspec.convert({k: v for k, v in fields.items() if v}, s.CollectionCreate)
        except msgspec.ValidationError as error:
            raise Problem(400, f"the collection cannot be created: {cut(str(error))}") from None
        created = await web_ops.collections.create(wanted)
        return Redirect(f"/docs/{created.id}", status_code=303)

    @get("/search")
    async def search(
        self,
        request: Request[Any, Any, Any],
        web_ops: NamedDependency[Operations],
        q: Annotated[str, QueryParameter(max_length=2000)] = "",
    ) -> Template:
        """One question across code, repository docs and collections, grouped by where it was found."""
        routed = await web_ops.search.route(q, None) if q.strip() else None
        return view("search.html", request, q=q, routed=routed)

    @get("/docs/jobs")
    async def jobs(
        self,
        request: Request[Any, Any, Any],
        web_ops: NamedDependency[Operations],
        status: FromQuery[str] = "",
        kind: FromQuery[str] = "",
    ) -> Template:
        # The filter form sends "" for "any".
        jobs = await web_ops.jobs.monitor(
            _choice(status, s.JobStatusName, "status"), _choice(kind, s.JobKindName, "kind"), PageRequest(200)
        )
        active = any(job.status in ("queued", "running") for job in jobs.items)
        back = f"/docs/jobs?{request.url.query}" if request.url.query else "/docs/jobs"
        return view(
            "jobs.html", request, jobs=jobs.items, status=status, kind=kind, refresh=active, back=back
        )

    @post("/docs/jobs/{job_id:str}/retry", status_code=303)
    async def retry_job(
        self,
        job_id: FromPath[str],
        web_ops: NamedDependency[Operations],
        data: Annotated[dict[str, str], Form],
    ) -> Redirect:
        await web_ops.jobs.retry(job_id)
        back = data.get("back", "")  # the monitor as it was filtered
        return Redirect(back if back.startswith("/docs/jobs?") else "/docs/jobs", status_code=303)

    @get("/docs/{collection_id:str}")
    async def collection(
        self,
        request: Request[Any, Any, Any],
        collection_id: FromPath[str],
        web_ops: NamedDependency[Operations],
        q: Annotated[str, QueryParameter(max_length=2000)] = "",
        source: FromQuery[str] = "",
        page_token: FromQuery[str] = "",
    ) -> Template:
        return await self._collection_page(
            request, web_ops, collection_id, q=q, source=source, token=page_token
        )

    @post("/docs/{collection_id:str}/documents")
    async def upload(
        self,
        request: Request[Any, Any, Any],
        collection_id: FromPath[str],
        web_ops: NamedDependency[Operations],
    ) -> Template:
        form = await request.form()
        files = [f for f in form.getall("files", []) if isinstance(f, UploadFile) and f.filename]
        if not files:
            raise Problem(400, "choose one or more markdown files, or a folder, to upload")
        uploads: list[s.DocumentUpload] = []
        refused: list[s.DocumentResult] = []
        for file in files:
            content = await file.read()
            try:
                uploads.append(s.DocumentUpload(source_key=file.filename, content=content.decode()))
            except UnicodeDecodeError:
                error = s.DocumentError(reason="not_utf8", message="the file is not UTF-8 text")
                refused.append(
                    s.DocumentResult(source_key=file.filename, document_id=None, state=None, error=error)
                )
        results = list(refused)
        if uploads:
            batch = await web_ops.documents.upload_batch(collection_id, uploads)
            results = batch.results + refused
        return await self._collection_page(request, web_ops, collection_id, results=results)

    @post("/docs/{collection_id:str}/grants", status_code=303)
    async def add_grant(
        self,
        collection_id: FromPath[str],
        web_ops: NamedDependency[Operations],
        data: Annotated[dict[str, str], Form],
    ) -> Redirect:
        group = data.get("group", "").strip()
        if not group:
            raise Problem(400, "name the group to grant read access to")
        await web_ops.collections.add_grant(collection_id, group)
        return Redirect(f"/docs/{collection_id}#access", status_code=303)

    @post("/docs/{collection_id:str}/grants/remove", status_code=303)
    async def remove_grant(
        self,
        collection_id: FromPath[str],
        web_ops: NamedDependency[Operations],
        data: Annotated[dict[str, str], Form],
    ) -> Redirect:
        await web_ops.collections.remove_grant(collection_id, data.get("group", ""))
        return Redirect(f"/docs/{collection_id}#access", status_code=303)

    @post("/docs/{collection_id:str}/re-embed", status_code=303)
    async def re_embed(self, collection_id: FromPath[str], web_ops: NamedDependency[Operations]) -> Redirect:
        await web_ops.collections.re_embed(collection_id)
        return Redirect(f"/docs/{collection_id}", status_code=303)

    @get("/docs/{collection_id:str}/documents/{document_id:str}/delete")
    async def confirm_delete(
        self,
        request: Request[Any, Any, Any],
        collection_id: FromPath[str],
        document_id: FromPath[str],
        web_ops: NamedDependency[Operations],
    ) -> Template:
        document = await web_ops.documents.get(collection_id, document_id)
        return view("delete.html", request, document=document)

    @post("/docs/{collection_id:str}/documents/{document_id:str}/delete", status_code=303)
    async def delete_document(
        self, collection_id: FromPath[str], document_id: FromPath[str], web_ops: NamedDependency[Operations]
    ) -> Redirect:
        await web_ops.documents.delete(collection_id, document_id)
        return Redirect(f"/docs/{collection_id}", status_code=303)

    @get("/docs/{collection_id:str}/documents/{document_id:str}")
    async def document(
        self,
        request: Request[Any, Any, Any],
        collection_id: FromPath[str],
        document_id: FromPath[str],
        web_ops: NamedDependency[Operations],
        tab: FromQuery[str] = "preview",
        find: Annotated[str, QueryParameter(max_length=500)] = "",
    ) -> Template:
        if tab not in TABS:
            raise Problem(404, f"a document has no {tab!r} tab: its tabs are {', '.join(TABS)}")
        document = await web_ops.documents.get(collection_id, document_id)
        collection = await web_ops.collections.get(collection_id)
        viewer_url = f"/docs/{collection.id}/documents"
        # A page's heading is its document's own first h1 on Preview, the title above the others.
        context: dict[str, Any] = {
            "collection": collection,
            "document": document,
            "tab": tab,
            "tabs": TABS,
            "html": "",
        }
        if tab == "preview":
            context["html"] = render_document(document, viewer_url)
        elif tab == "raw":
            context["lines"] = document.content.splitlines()
        elif tab == "chunks":
            chunks = await web_ops.documents.chunks(collection_id, document_id, PageRequest(MAX_CHUNKS))
            phrase = find.strip().lower()
            context.update(
                chunks=chunks.items,
                find=find,
                carrying=[c.chunk_index for c in chunks.items if phrase and phrase in c.content.lower()],
            )
        return view("document.html", request, can_write=_can_write(request, collection), **context)

    async def _collection_page(
        self,
        request: Request[Any, Any, Any],
        web_ops: Operations,
        collection_id: str,
        *,
        q: str = "",
        source: str = "",
        token: str = "",
        results: list[s.DocumentResult] | None = None,
    ) -> Template:
        collection = await web_ops.collections.get(collection_id)
        documents = await web_ops.documents.summaries(collection_id, PageRequest(500, token))
        shown = [d for d in documents.items if source.lower() in d.source_key.lower()]
        status = await web_ops.collections.embed_status(collection_id)
        hits = await web_ops.collections.search(collection_id, q, None) if q.strip() else None
        return view(
            "collection.html",
            request,
            collection=collection,
            documents=shown,
            next_page_token=documents.next_page_token,
            source=source,
            q=q,
            hits=hits,
            embed=status,
            results=results,
            can_write=_can_write(request, collection),
        )


def _choice(value: str, names: Any, what: str) -> Any:
    """A filter's value: one of the names, or None for "any" (empty)."""
    allowed = get_args(names)
    if value and value not in allowed:
        raise Problem(400, f"{value!r} is not a job {what}: one of {', '.join(allowed)}")
    return value or None


def _can_write(request: Request[Any, Any, Any], collection: s.Collection) -> bool:
    viewer = request.scope.get(VIEWER_KEY)
    return isinstance(viewer, Principal) and (viewer.admin or viewer.subject == collection.owner)
