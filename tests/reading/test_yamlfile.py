"""The bounded YAML reader: every bound is one error naming it, inside seconds, and a
document within the bounds loads as ``yaml.safe_load`` loads it."""

from __future__ import annotations

import pytest
import yaml

from cmax.errors import CmaxError
from cmax.reading.limits import MAX_YAML_ALIASES, MAX_YAML_DEPTH, MAX_YAML_NODES
from cmax.reading.yamlfile import load_yaml
from tests.submission.intake.llmb_fakes import Job, config_text


def laughs(levels: int, width: int = 10) -> str:
    """The "billion laughs" alias bomb: each level a list of ``width`` aliases of the last."""
    lines = ["a0: &a0 [lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_a_real_llmb_config_loads_as_safe_load_loads_it() -> None:
    text = config_text(Job(env_overrides={"NCCL_DEBUG": "INFO"}, mbridge_args=("--x",)))
    assert load_yaml(text, file="c.yaml") == yaml.safe_load(text)


def test_a_few_anchors_within_the_budget_load() -> None:
    text = "base: &b {a: 1, b: [1, 2]}\none: *b\ntwo: *b\n"
    assert load_yaml(text) == {"base": {"a": 1, "b": [1, 2]}, "one": {"a": 1, "b": [1, 2]},
                               "two": {"a": 1, "b": [1, 2]}}


def test_an_alias_bomb_is_one_error_naming_the_bound() -> None:
    text = laughs(9)  # 10^8 nodes expanded, 1.4 KB
    assert len(text) < 2048
    with pytest.raises(CmaxError) as info:
        load_yaml(text, file="llmb-config_1.yaml")
    message = info.value.one_line()
    assert f"limit of {MAX_YAML_NODES:,} nodes" in message and "llmb-config_1.yaml:" in message


def test_more_aliases_than_the_budget() -> None:
    text = "a: &a x\nb: [" + ", ".join(["*a"] * (MAX_YAML_ALIASES + 1)) + "]\n"
    with pytest.raises(CmaxError, match=f"limit of {MAX_YAML_ALIASES} aliases"):
        load_yaml(text)
    load_yaml("a: &a x\nb: [" + ", ".join(["*a"] * MAX_YAML_ALIASES) + "]\n")


@pytest.mark.parametrize("text", ["[" * 50_000 + "]" * 50_000, "{a: " * 50_000 + "1" + "}" * 50_000,
                                  "".join("  " * i + f"k{i}:\n" for i in range(200))])
def test_nesting_beyond_the_depth_is_one_error_not_a_recursion_error(text: str) -> None:
    with pytest.raises(CmaxError, match=f"limit of {MAX_YAML_DEPTH} levels") as info:
        load_yaml(text, file="c.yaml")
    assert info.value.line == MAX_YAML_DEPTH + 1 or info.value.line == 1


def test_nesting_at_the_depth_loads() -> None:
    assert load_yaml("[" * MAX_YAML_DEPTH + "]" * MAX_YAML_DEPTH) is not None


def test_an_alias_to_a_node_that_holds_it_is_refused() -> None:
    with pytest.raises(CmaxError, match="refers to a node that holds it"):
        load_yaml("a: &a [1, *a]\n")


def test_syntax_errors_stay_yaml_errors_for_the_caller_to_word() -> None:
    with pytest.raises(yaml.YAMLError):
        load_yaml("job_info: [unclosed\n")
