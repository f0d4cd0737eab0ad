"""What runs a local sentence-transformers model: PyTorch, or ONNX Runtime or OpenVINO on an export
of it.

All give the model's vectors (mean of the token vectors, unit length). On a 2-core CPU OpenVINO
gives them 2.06 times as fast from the full weights where the CPU computes in bfloat16, and ONNX
Runtime 1.74 times from an int8 copy that moves them more (bench/embedding_runtimes.py). The export
is made from the installed model files by PyTorch at the first start (or ahead of it, by `cograph
prepare` where the image is built), once, into a cache directory, and never downloaded; running it
needs no PyTorch, so an installation with the export may leave PyTorch out.
"""

from __future__ import annotations

import abc
import copy
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cograph_embeddings.base import EmbeddingError, InputWindows

# Texts per forward pass. The texts are sorted by length first, and each pass is padded to its
# longest text only: passes of 32 pad short texts far less than one pass of a mixed batch.
PASS_TEXTS = 32
# How much of the library's reason a model that cannot load is reported with.
_REASON_CHARS = 300
# What an export holds, beside the model's own tokenizer.json.
_ONNX_FILE = "model.onnx"
_EXPORT_INFO = "export.json"
# Changed whenever an export would differ (the exporter, its inputs or its quantization).
_EXPORT_VERSION = "3"


class Engine(abc.ABC):
    """One instance of the model, used from one thread at a time."""

    dimension: int

    @abc.abstractmethod
    def encode(self, texts: list[str]) -> list[list[float]]:
        """Unit vectors of the texts, in order. Blocking."""

    @abc.abstractmethod
    def windows(self) -> InputWindows:
        """The model's tokenizer and input length, usable from any thread."""

    @abc.abstractmethod
    def another(self) -> Engine:
        """An instance for another thread, sharing what can be shared. Blocking."""


def _model_error(path: Path, error: BaseException) -> EmbeddingError:
    reason = " ".join(str(error).split())  # one line, however the library wrote it
    if len(reason) > _REASON_CHARS:
        reason = reason[: _REASON_CHARS - 1] + "…"
    return EmbeddingError(
        f"COGRAPH_EMBEDDING__MODEL_PATH: {path} is not a sentence-transformers model"
        f" this installation can load: {reason}"
    )


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _check_model_dir(path: Path) -> None:
    if not (path / "config.json").exists() and not (path / "modules.json").exists():
        raise EmbeddingError(f"no sentence-transformers model in {path}")


class TorchEngine(Engine):
    """The model as sentence-transformers runs it, on PyTorch."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.dimension = int(model.get_embedding_dimension())
        self._windows: _HuggingFaceWindows | None = None

    @classmethod
    def load(cls, path: Path) -> TorchEngine:
        _check_model_dir(path)
        _offline()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:  # an installation without PyTorch, which runs an export
            raise EmbeddingError(
                f"PyTorch and sentence-transformers are not installed here ({error.name} is missing):"
                " set COGRAPH_EMBEDDING__RUNTIME=openvino, onnx or onnx-int8, which run an export"
                " of the model made where they are (`cograph prepare`)"
            ) from error
        try:
            return cls(SentenceTransformer(str(path), device="cpu", local_files_only=True))
        except (ValueError, OSError, KeyError) as error:  # files there, but not a model it can load
            raise _model_error(path, error) from error

    def encode(self, texts: list[str]) -> list[list[float]]:
        vectors = self.model.encode(
            texts,
            batch_size=PASS_TEXTS,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.tolist()  # type: ignore[no-any-return]  # numpy: Python floats, in C

    def windows(self) -> InputWindows:
        if self._windows is None:
            self._windows = _HuggingFaceWindows(self.model)
        return self._windows

    def another(self) -> TorchEngine:
        """The modules and tokenizer copied (a tokenizer serves one thread at a time), the
        parameters and buffers shared: no second copy of the weights."""
        shared = {id(tensor): tensor for tensor in (*self.model.parameters(), *self.model.buffers())}
        return TorchEngine(copy.deepcopy(self.model, memo=shared))


class _HuggingFaceWindows(InputWindows):
    """The model's own tokenizer, copied: the model's copy is reconfigured on every encode, which
    a call from another thread at that moment would fail ("Already borrowed")."""

    def __init__(self, model: Any) -> None:
        self._tokenizer = copy.deepcopy(model.tokenizer)
        # The model adds its special tokens ([CLS] and [SEP]) to every input.
        self.max_tokens = int(model.max_seq_length) - self._tokenizer.num_special_tokens_to_add()
        self._lock = threading.Lock()

    def spans(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        with self._lock:
            encoded = self._tokenizer(
                list(texts), add_special_tokens=False, return_offsets_mapping=True, verbose=False
            )
        return [[(int(start), int(end)) for start, end in offsets] for offsets in encoded["offset_mapping"]]


class ExportedEngine(Engine):
    """The model's transformer as exported to ONNX, run by a runtime a subclass names, with the
    model's mean pooling and normalization done here and its tokenizer run by `tokenizers`."""

    def __init__(self, directory: Path, inputs: set[str]) -> None:
        from tokenizers import Tokenizer

        info = json.loads((directory / _EXPORT_INFO).read_text())
        self._directory = directory
        self.dimension = int(info["dimension"])
        self._token_types = "token_type_ids" in inputs
        self._tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self._tokenizer.enable_truncation(int(info["max_seq_length"]))
        self._tokenizer.enable_padding()
        self._windows = _TokenizersWindows(Tokenizer.from_file(str(directory / "tokenizer.json")), info)

    @abc.abstractmethod
    def _forward(self, feed: dict[str, Any]) -> Any:
        """The transformer's last hidden state (a numpy array) for a tokenized batch."""

    def encode(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), PASS_TEXTS):
            batch = order[start : start + PASS_TEXTS]
            encoded = self._tokenizer.encode_batch([texts[i] for i in batch])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if self._token_types:
                feed["token_type_ids"] = np.array([e.type_ids for e in encoded], dtype=np.int64)
            hidden = self._forward(feed)
            weights = mask[:, :, None].astype(hidden.dtype)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            for index, vector in zip(batch, pooled.tolist(), strict=True):
                vectors[index] = vector
        return vectors

    def windows(self) -> InputWindows:
        return self._windows


class OnnxEngine(ExportedEngine):
    """The export (int8 weights where asked) run by ONNX Runtime."""

    def __init__(self, directory: Path) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # its warnings are about the graph, not about a request
        self._session = onnxruntime.InferenceSession(
            str(directory / _ONNX_FILE), options, providers=["CPUExecutionProvider"]
        )
        super().__init__(directory, {i.name for i in self._session.get_inputs()})

    @classmethod
    def load(cls, path: Path, cache: Path, *, quantize: bool) -> OnnxEngine:
        return cls(exported(path, cache, quantize=quantize))

    def _forward(self, feed: dict[str, Any]) -> Any:
        [hidden] = self._session.run(["last_hidden_state"], feed)
        return hidden

    def another(self) -> OnnxEngine:
        """A session of its own, made on the calling thread: its worker threads inherit that
        thread's scheduling priority."""
        return OnnxEngine(self._directory)


class OpenVinoEngine(ExportedEngine):
    """The fp32 export compiled by OpenVINO for the CPU. OpenVINO computes in the CPU's fastest
    precision: bfloat16 where it has AVX-512 BF16 or AMX (vectors move less than 0.0001 in cosine
    distance, bench/embedding_runtimes.py), fp32 elsewhere."""

    def __init__(self, directory: Path) -> None:
        import openvino

        core = openvino.Core()
        # Latency: a lane sends one request at a time, and each should have every core.
        compiled = core.compile_model(
            core.read_model(str(directory / _ONNX_FILE)), "CPU", {"PERFORMANCE_HINT": "LATENCY"}
        )
        self._request = compiled.create_infer_request()
        self._output = compiled.output("last_hidden_state")
        super().__init__(directory, {name for port in compiled.inputs for name in port.get_names()})

    @classmethod
    def load(cls, path: Path, cache: Path) -> OpenVinoEngine:
        return cls(exported(path, cache, quantize=False))

    def _forward(self, feed: dict[str, Any]) -> Any:
        return self._request.infer(feed)[self._output]

    def another(self) -> OpenVinoEngine:
        """A model compiled anew on the calling thread: its threads inherit that thread's
        scheduling priority. A second request on this one would queue behind this one's."""
        return OpenVinoEngine(self._directory)


class _TokenizersWindows(InputWindows):
    def __init__(self, tokenizer: Any, info: dict[str, Any]) -> None:
        # Every word piece of the whole text: the file may ask for padding and truncation.
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self._tokenizer = tokenizer
        self.max_tokens = int(info["max_seq_length"]) - int(info["special_tokens"])
        self._lock = threading.Lock()

    def spans(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        with self._lock:
            encoded = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [[(int(start), int(end)) for start, end in e.offsets] for e in encoded]


def exported(path: Path, cache: Path, *, quantize: bool) -> Path:
    """The directory of the ONNX export of the model at `path`, made now if the cache holds none
    for these model files. Making it needs PyTorch and sentence-transformers."""
    _check_model_dir(path)
    target = cache / _fingerprint(path, quantize)
    if (target / _EXPORT_INFO).exists():
        return target
    if importlib.util.find_spec("torch") is None:
        raise EmbeddingError(
            f"no export of the model in {path} in COGRAPH_EMBEDDING__EXPORT_DIR ({cache}), and no"
            " PyTorch here to make one: run `cograph prepare` with this EXPORT_DIR where PyTorch is"
            " installed (the image's build does), or install it"
        )
    cache.mkdir(parents=True, exist_ok=True)
    # Made aside and renamed into place: a process that starts meanwhile never sees half of it.
    building = Path(tempfile.mkdtemp(prefix=".export-", dir=cache))
    try:
        _export(path, building, quantize=quantize)
        try:
            building.rename(target)
        except OSError:  # another process finished first: theirs is the same
            if not (target / _EXPORT_INFO).exists():
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return target


def _fingerprint(path: Path, quantize: bool) -> str:
    """A name for the export of these model files made this way: their names and contents, so a
    copy of the model (an image layer, a volume) keeps its export, and other weights of the same
    size do not (hashing all-MiniLM-L6-v2's 88 MB takes about 0.07 s)."""
    digest = hashlib.sha256(f"{_EXPORT_VERSION}:{quantize}".encode())
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        with file.open("rb") as contents:
            digest.update(
                f"{file.relative_to(path)}:{hashlib.file_digest(contents, 'sha256').hexdigest()}\n".encode()
            )
    return f"{path.name}-{'int8' if quantize else 'fp32'}-{digest.hexdigest()[:16]}"


def _export(path: Path, target: Path, *, quantize: bool) -> None:
    engine = TorchEngine.load(path)
    model = engine.model
    modules = [type(module).__name__ for module in model]
    pooling = model[1] if len(model) > 1 else None
    if modules[:1] != ["Transformer"] or getattr(pooling, "pooling_mode", "mean") != "mean":
        raise EmbeddingError(
            f"COGRAPH_EMBEDDING__RUNTIME=onnx runs transformer models with mean pooling; {path} is"
            f" {' + '.join(modules)}: set COGRAPH_EMBEDDING__RUNTIME=torch"
        )
    import torch

    transformer = model[0].auto_model.eval()
    tokenizer = model.tokenizer
    # Traced on a padded batch: a mask of ones only would let the model skip masking in the trace.
    sample = tokenizer(["a b c d e f g h", "a"], padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, *inputs: Any) -> Any:
            return self.transformer(**dict(zip(names, inputs, strict=True))).last_hidden_state

    full = target / ("model.fp32.onnx" if quantize else _ONNX_FILE)
    # The tracer warns of branches it fixes as constants (an encoder's padding length is 0, it is
    # never causal) and of indexing it rewrites: true of every trace of this model, and nothing
    # a person starting the system could act on. The export's vectors are tested against PyTorch's.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHiddenState(),
            tuple(sample[n] for n in names),
            str(full),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
            opset_version=17,
            dynamo=False,
        )
    if quantize:
        from onnx import TensorProto
        from onnxruntime.quantization import QuantType, quantize_dynamic

        # The matrix products' weights only, per output channel: quantizing every op (the word
        # embeddings too) per tensor moved vectors up to 0.135 in cosine distance and cost 0.012
        # of SciFact nDCG@10; this moves them at most 0.01.
        quantize_dynamic(
            str(full),
            str(target / _ONNX_FILE),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            extra_options={"DefaultTensorType": TensorProto.FLOAT},
        )
        full.unlink()
    shutil.copyfile(path / "tokenizer.json", target / "tokenizer.json")
    info = {
        "dimension": engine.dimension,
        "max_seq_length": int(model.max_seq_length),
        "special_tokens": int(tokenizer.num_special_tokens_to_add()),
        "quantized": quantize,
        "source": str(path),
    }
    (target / _EXPORT_INFO).write_text(json.dumps(info, indent=2))
