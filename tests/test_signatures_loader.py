"""The database refuses to load, naming the file and the entry, when any entry is bad."""
from __future__ import annotations

import pytest

from dllogscan.core.errors import SignatureError
from dllogscan.signatures.loader import load_database

GOOD = '''
[[signature]]
id = "X.one"
class = "A"
subclass = "bus-error"
title = "t"
role = "failure"
keywords = ["Bus error"]
pattern = 'Bus error'
examples = ["Bus error here"]
counter_examples = ["bus stop"]
'''


def write(tmp_path, text):
    p = tmp_path / "user.toml"
    p.write_text(text)
    return p


def test_good_user_file_loads(tmp_path):
    db = load_database([write(tmp_path, GOOD)], include_default=False)
    assert [s.id for s in db.signatures] == ["X.one"]


@pytest.mark.parametrize("change, message", [
    (("pattern = 'Bus error'", "pattern = 'Bus (error'"), "pattern does not compile"),
    (("pattern = 'Bus error'", "pattern = 'Bus error at'"), "example does not match"),
    (('examples = ["Bus error here"]', 'examples = ["BUS ERROR"]'), "holds none of the keywords"),
    (('counter_examples = ["bus stop"]', 'counter_examples = ["Bus error too"]'), "counter-example matches"),
    (('role = "failure"', 'role = "failure"\ncolour = "red"'), "unknown keys"),
    (('subclass = "bus-error"', 'subclass = "Bus Error"'), "lower-case"),
    (('class = "A"', 'class = "Q"'), "class 'Q'"),
    (('keywords = ["Bus error"]', 'keywords = []'), "missing or empty 'keywords'"),
    (('role = "failure"', 'role = "failure"\nonce = true'), "once must be true or false, and true only for a fact"),
    (('role = "failure"', 'role = "fact"\nonce = "yes"'), "once must be true or false"),
])
def test_bad_entry_is_refused_with_file_and_id(tmp_path, change, message):
    bad = GOOD.replace(*change)
    with pytest.raises(SignatureError) as info:
        load_database([write(tmp_path, bad)], include_default=False)
    assert "user.toml" in str(info.value) and "X.one" in str(info.value) and message in str(info.value)


def test_duplicate_id_refused(tmp_path):
    with pytest.raises(SignatureError, match="duplicate id"):
        load_database([write(tmp_path, GOOD + GOOD)], include_default=False)


def test_class_b_subclass_rule(tmp_path):
    bad = GOOD.replace('class = "A"', 'class = "B"')
    with pytest.raises(SignatureError, match="must start with oom, getitem or crash"):
        load_database([write(tmp_path, bad)], include_default=False)


def test_unknown_condition_target_refused(tmp_path):
    bad = GOOD.replace('role = "failure"', 'role = "failure"\nrequires = [{ ids = ["Nope.x"], within = 5 }]')
    with pytest.raises(SignatureError, match="unknown signature 'Nope.x'"):
        load_database([write(tmp_path, bad)], include_default=False)


def test_invalid_toml_and_missing_file(tmp_path):
    with pytest.raises(SignatureError, match="invalid TOML"):
        load_database([write(tmp_path, "[[signature]\n")], include_default=False)
    with pytest.raises(SignatureError, match="not found"):
        load_database([tmp_path / "absent.toml"], include_default=False)


def test_fixes_most_specific_key_first(mini_db):
    assert mini_db.fixes_for("B", "oom")[0].title == "Confirm the OOM killer"
    assert mini_db.fixes_for("B", "getitem")[0].key == "B"
    assert mini_db.fixes_for("B", "oom-suspected")[0].key == "B.oom"


FIX = '''
[[fix]]
key = "A"
rank = 1
title = "Usual"
why = "u"
commands = ["df -h /dev/shm"]

[[fix]]
key = "A.bus-error"
rank = 1
title = "Usual for bus errors"
why = "u"
commands = ["df -h /dev/shm"]

[[fix]]
key = "A"
when = "shm-ample"
rank = 1
title = "Ample"
why = "a"
commands = ["du -sh /dev/shm"]
'''


def test_fixes_for_a_situation_replace_the_usual_ones(tmp_path):
    db = load_database([write(tmp_path, GOOD + FIX)], include_default=False)
    assert [f.title for f in db.fixes_for("A", "bus-error")] == ["Usual for bus errors"]
    # the situation's fixes win over a more specific key's usual ones
    assert [f.title for f in db.fixes_for("A", "bus-error", frozenset({"shm-ample"}))] == ["Ample"]
    assert [f.title for f in db.fixes_for("B", None, frozenset({"shm-ample"}))] == []


def test_unknown_situation_refused(tmp_path):
    with pytest.raises(SignatureError, match="when 'sunny' is none of fd-limit-ample, keras, macos, mxnet, shm-ample"):
        load_database([write(tmp_path, GOOD + FIX.replace('"shm-ample"', '"sunny"'))], include_default=False)


MADE = FIX.replace('when = "shm-ample"\n', 'already = { start_method = ["Spawn", "forkserver"] }\n')


def test_a_fix_names_the_setting_it_makes(tmp_path):
    [fix] = [f for f in load_database([write(tmp_path, GOOD + MADE)], include_default=False).fixes if f.title == "Ample"]
    assert fix.already == (("start_method", ("spawn", "forkserver")),)


@pytest.mark.parametrize("made, problem", [
    ('already = { shm_size = "64M" }', "already names shm_size, which is no loader setting"),
    ('already = "spawn"', "already must be a table of facts"),
    ('already = { start_method = [] }', "already must be a table of facts"),
    ('already = {}', "already must be a table of facts"),
])
def test_a_made_setting_that_is_no_loader_setting_is_refused(tmp_path, made, problem):
    with pytest.raises(SignatureError, match=problem):
        load_database([write(tmp_path, GOOD + FIX.replace('when = "shm-ample"', made))], include_default=False)


VARIANT = GOOD.replace('id = "X.one"', 'id = "X.two"').replace(
    "counter_examples", 'variant_of = "X.one"\nrequires = [{ ids = ["@loader"], within = 40 }]\ncounter_examples')


def test_a_variant_names_its_base(tmp_path):
    db = load_database([write(tmp_path, GOOD + VARIANT)], include_default=False)
    assert [(s.id, s.variant_of) for s in db.signatures] == [("X.one", None), ("X.two", "X.one")]


@pytest.mark.parametrize("variant", [
    VARIANT.replace('variant_of = "X.one"', 'variant_of = "X.nowhere"'),
    VARIANT.replace('class = "A"', 'class = "C"'),
    VARIANT.replace('variant_of = "X.one"', 'variant_of = "X.two"'),
    VARIANT.replace('variant_of = "X.one"', 'variant_of = 3'),
])
def test_a_variant_of_no_entry_of_its_class_is_refused(tmp_path, variant):
    with pytest.raises(SignatureError, match="X.two.*variant_of"):
        load_database([write(tmp_path, GOOD + variant)], include_default=False)
