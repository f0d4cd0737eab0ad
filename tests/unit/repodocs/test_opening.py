"""A checkout's file is checked as what is opened: the checkout may change between a look at a
path and its opening (a file swapped for a FIFO, or for a symlink out of the checkout)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cograph_repodocs.opening import NotReadable, read_inside


@pytest.fixture
def root(tmp_path: Path) -> Path:
    checkout = (tmp_path / "checkout").resolve()
    checkout.mkdir()
    (checkout / "inside.md").write_text("# Inside\n")
    (tmp_path / "secret.txt").write_text("root:x:0:0\n")
    return checkout


def test_a_regular_file_inside_is_read_up_to_the_limit(root: Path) -> None:
    assert read_inside(root, root / "inside.md", 4) == (b"# In", "inside.md")


def test_a_fifo_is_refused_at_once_instead_of_blocking_the_sync(root: Path) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(NotReadable, match="not a regular file"):
        read_inside(root, root / "pipe", 100)


def test_a_symlink_out_of_the_checkout_is_refused_once_opened(root: Path) -> None:
    (root / "README.md").symlink_to(root.parent / "secret.txt")
    with pytest.raises(NotReadable, match="outside the checkout"):
        read_inside(root, root / "README.md", 100)


def test_a_symlink_inside_is_followed_and_named_by_its_target(root: Path) -> None:
    (root / "link.md").symlink_to(root / "inside.md")
    assert read_inside(root, root / "link.md", 100) == (b"# Inside\n", "inside.md")


def test_no_symlink_is_followed_where_none_may_be(root: Path) -> None:
    (root / "link.md").symlink_to(root / "inside.md")
    with pytest.raises(NotReadable, match="a symlink"):
        read_inside(root, root / "link.md", 100, follow=False)
