"""Identifier mentions in prose, and resolving them against code nodes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cograph_repodocs.domain.mentions import (
    Mention,
    MentionForm,
    ResolvedMention,
    SymbolIndex,
    find_mentions,
    resolve_mentions,
)
from cograph_repodocs.domain.symbols import extract_symbols

BACKTICK = MentionForm.BACKTICK
DOTTED = MentionForm.DOTTED
CALL = MentionForm.CALL


def forms(text: str) -> list[tuple[str, MentionForm]]:
    return [(m.text, m.form) for m in find_mentions(text)]


def test_the_three_forms_in_realistic_prose() -> None:
    text = (
        "Configuration is loaded by `ParseConfig`, which returns a `config.Settings`. "
        "Requests are routed through service.handler.dispatch before validate() runs; "
        "call `client.connect()` or ``Session.open(timeout=3)`` to start."
    )
    assert find_mentions(text) == [
        Mention(text="ParseConfig", form=BACKTICK, start=text.index("ParseConfig")),
        Mention(text="config.Settings", form=BACKTICK, start=text.index("config.Settings")),
        Mention(text="service.handler.dispatch", form=DOTTED, start=text.index("service.handler")),
        Mention(text="validate", form=CALL, start=text.index("validate"), called=True),
        Mention(text="client.connect", form=BACKTICK, start=text.index("client.connect"), called=True),
        Mention(text="Session.open", form=BACKTICK, start=text.index("Session.open"), called=True),
    ]


def test_calls_with_arguments_count_only_when_the_name_looks_like_code() -> None:
    text = (
        "Pass the file(s) to load_config(path) and then cache.put(key, value) or getUser(id); see item (3)."
    )
    assert forms(text) == [("load_config", CALL), ("cache.put", CALL), ("getUser", CALL)]


@pytest.mark.parametrize(
    "text",
    [
        "Read https://github.com/org/repo.Utils and www.example.org/a.b for details.",
        "Mail ops.team@example.com or visit example.com, github.com and docs.python.org.",
        "Edit config.yaml, README.md, setup.py, go.mod, package.json and main.go first.",
        "Requires Python 3.11, version 1.2.3 or v2.0 and at least 0.5.",
        "Use a runner, e.g. tox, i.e. the default; a.k.a. the harness, etc. and so on.",
        "The file lives in services/repodocs/src/app.module and /etc/app.conf.d.",
        "Runs on Node.js and Vue.js.",
        "Run `make test` or `git push --force` or `x = 1` here.",
        "```\ncode fence\n```",
    ],
)
def test_false_positives_are_not_mentions(text: str) -> None:
    assert forms(text) == []


def test_sphinx_cross_reference_roles_name_their_target() -> None:
    text = (
        "The :class:`~pkg.mod.Loader` reads files; call :meth:`.Loader.load` or "
        ":py:func:`!pkg.read()`, and see :class:`the loader <pkg.Loader>`."
    )
    assert find_mentions(text) == [
        Mention(
            text="pkg.mod.Loader",
            form=BACKTICK,
            start=text.index("pkg.mod.Loader"),
            target="pkg.mod.Loader",
            marked=True,
        ),
        Mention(
            text="Loader.load",
            form=BACKTICK,
            start=text.index("Loader.load"),
            target="Loader.load",
            marked=True,
        ),
        Mention(
            text="pkg.read",
            form=BACKTICK,
            start=text.index("pkg.read"),
            target="pkg.read",
            marked=True,
            called=True,
        ),
        Mention(
            text="pkg.Loader",
            form=BACKTICK,
            start=text.index("pkg.Loader>"),
            target="pkg.Loader",
            marked=True,
        ),
    ]


def test_role_markers_count_only_after_a_role() -> None:
    # In markdown a leading dot or a title with a target is no reference: `.env` is a file.
    assert forms("Edit `.env`, `~/.bashrc` and `the loader <pkg.Loader>` first.") == []
    # Roles whose target is no identifier (labels, documents) yield nothing.
    assert forms("See :ref:`Getting started <getting-started>` and :doc:`guide/intro`.") == []


def test_a_sphinx_reference_links_to_its_symbol() -> None:
    index = SymbolIndex([("n-loader", "Loader", "pkg.mod.Loader"), ("n-load", "load", "pkg.mod.Loader.load")])
    text = "Use :meth:`.Loader.load` of :class:`the loader <pkg.mod.Loader>`."
    assert resolve_mentions(find_mentions(text), index) == [
        ResolvedMention(
            code_node_key="n-load", form=BACKTICK, text="Loader.load", start=text.index("Loader")
        ),
        ResolvedMention(
            code_node_key="n-loader", form=BACKTICK, text="pkg.mod.Loader", start=text.index("pkg.mod")
        ),
    ]


def test_names_starting_with_a_letter_of_any_script_are_mentions() -> None:
    text = "Rufe `Überweisung` auf, dann Überweisung() und konto.Überweisung; 調用 `計算` oder 計算()."
    assert forms(text) == [
        ("Überweisung", BACKTICK),
        ("Überweisung", CALL),
        ("konto.Überweisung", DOTTED),
        ("計算", BACKTICK),
        ("計算", CALL),
    ]
    # camelCase in any script looks like code; prose stays prose.
    prose = "Dann überWeisung(betrag) mit der Datei(en), z.B. und d.h. nicht."
    assert forms(prose) == [("überWeisung", CALL)]


def test_a_symbol_named_in_another_script_is_linked() -> None:
    source = "def Überweisung(betrag):\n    pass\n\n\ndef 計算():\n    pass\n"
    symbols = extract_symbols("bank/konto.py", source.encode())
    index = SymbolIndex((s.qualified_name, s.name, s.qualified_name) for s in symbols)
    text = "Call `Überweisung` first, then 計算()."
    assert resolve_mentions(find_mentions(text), index) == [
        ResolvedMention(
            code_node_key="bank.konto.Überweisung",
            form=BACKTICK,
            text="Überweisung",
            start=text.index("Überweisung"),
        ),
        ResolvedMention(code_node_key="bank.konto.計算", form=CALL, text="計算", start=text.index("計算")),
    ]


def test_a_mention_is_reported_once_in_its_strongest_form() -> None:
    assert forms("Call `pkg.run()` then pkg.run() then pkg.run again.") == [
        ("pkg.run", BACKTICK),
        ("pkg.run", CALL),
        ("pkg.run", DOTTED),
    ]


def test_identifiers_inside_fenced_code_are_mentions() -> None:
    text = "Example:\n\n```python\nsettings = config.load_settings(path)\nserver.start()\n```\n"
    assert forms(text) == [("config.load_settings", CALL), ("server.start", CALL)]


def test_a_sentence_ending_dot_is_not_part_of_a_name() -> None:
    assert forms("Everything ends in service.handler.dispatch.") == [("service.handler.dispatch", DOTTED)]


NODES = [
    ("n-parse", "ParseConfig", "internal.config.ParseConfig"),
    ("n-settings", "Settings", "cograph.config.Settings"),
    ("n-dispatch", "dispatch", "app.service.handler.dispatch"),
    ("n-validate", "validate", "app.checks.validate"),
    ("n-connect", "connect", "sdk.client.Client.connect"),
    ("n-load", "load", "pkg.io.load"),
    ("n-load2", "load", "pkg.yaml.load"),
    ("n-run1", "run", "a.run"),
    ("n-run2", "run", "b.run"),
    ("n-run3", "run", "c.run"),
    ("n-run4", "run", "d.run"),
    ("n-main", "main", "main"),
]
INDEX = SymbolIndex(NODES)


@pytest.mark.parametrize(
    ("identifier", "nodes"),
    [
        # Exact qualified name.
        ("internal.config.ParseConfig", ["n-parse"]),
        ("main", ["n-main"]),
        # Dotted suffix on segment boundaries.
        ("config.ParseConfig", ["n-parse"]),
        ("Client.connect", ["n-connect"]),
        ("handler.dispatch", ["n-dispatch"]),
        ("ler.dispatch", []),
        # Bare name.
        ("ParseConfig", ["n-parse"]),
        ("load", ["n-load", "n-load2"]),
        # More than three candidates: too generic to link.
        ("run", []),
        # A dotted mention never falls back to the bare name of its last segment.
        ("os.path.load", []),
        ("Unknown", []),
    ],
)
def test_lookup(identifier: str, nodes: list[str]) -> None:
    assert INDEX.lookup(identifier) == nodes


def test_resolve_links_each_node_once_from_its_first_mention() -> None:
    text = (
        "Start with `ParseConfig`. Later, ParseConfig() is called again by config.ParseConfig. "
        "The handler calls self.dispatch() and the dispatcher runs validate(); "
        "the `Settings` struct is documented in settings.md. `run` is too generic to link."
    )
    assert resolve_mentions(find_mentions(text), INDEX) == [
        ResolvedMention(
            code_node_key="n-parse", form=BACKTICK, text="ParseConfig", start=text.index("ParseConfig")
        ),
        ResolvedMention(
            code_node_key="n-dispatch", form=CALL, text="self.dispatch", start=text.index("self.dispatch")
        ),
        ResolvedMention(
            code_node_key="n-validate", form=CALL, text="validate", start=text.index("validate()")
        ),
        ResolvedMention(
            code_node_key="n-settings", form=BACKTICK, text="Settings", start=text.index("Settings")
        ),
    ]


def test_resolve_with_an_empty_index() -> None:
    assert resolve_mentions(find_mentions("`ParseConfig` and validate()"), SymbolIndex([])) == []


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab_.()`@/: \n1~<>!Ü計$", max_size=300))
def test_every_mention_points_at_its_text(text: str) -> None:
    mentions = find_mentions(text)
    assert [m.start for m in mentions] == sorted(m.start for m in mentions)
    for mention in mentions:
        assert text[mention.start : mention.start + len(mention.text)] == mention.text
