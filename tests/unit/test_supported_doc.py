"""docs/supported.md is generated from the primitive table: it must be up to date."""

from myc.tools import gen_supported


def test_supported_doc_is_up_to_date():
    assert gen_supported.DOC.read_text() == gen_supported.render(), (
        "docs/supported.md is stale: run python -m myc.tools.gen_supported")


def test_every_declared_name_is_listed():
    from myc.prims import REGISTRY

    text = gen_supported.render()
    for p in REGISTRY.values():
        for name in p.names:
            assert f"`{name.removeprefix('builtins.')}`" in text, name
