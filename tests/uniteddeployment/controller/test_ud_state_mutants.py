"""Reading a snapshot into a UnitedState: what mutation testing (run U1) found unpinned. The
snapshot must name exactly one UnitedDeployment (or the one `--name` chooses); its nodes are kept
for the node-fit check."""

from __future__ import annotations

import pytest
from ud_testkit import ud_object

from py_engine.uniteddeployment.controller.state import StateError, state_from_objects

pytestmark = pytest.mark.timeout(30)

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}


def test_the_nodes_of_a_snapshot_are_kept() -> None:
    state = state_from_objects([NODE, ud_object(1, [{"name": "a"}]), POD])
    assert state.nodes == (NODE,) and state.pods == (POD,)


def test_a_name_chooses_one_of_several() -> None:
    objects = [ud_object(1, [{"name": "a"}], name="web"), ud_object(1, [{"name": "a"}], name="db")]
    assert state_from_objects(objects, "db").ud.name == "db"
    assert state_from_objects(objects, "web").ud.name == "web"


@pytest.mark.parametrize(
    ("objects", "name", "message"),
    [
        ([NODE], None, "no UnitedDeployment in the state"),
        ([NODE, ud_object(1, [{"name": "a"}])], "db", "no UnitedDeployment named 'db' in the state"),
        (
            [ud_object(1, [], name="web"), ud_object(1, [], name="db")],
            None,
            "several UnitedDeployments in the state (db, web); choose one with --name",
        ),
    ],
)
def test_a_snapshot_without_one_ud_is_refused_with_a_clear_message(
    objects: list[dict[str, object]], name: str | None, message: str
) -> None:
    with pytest.raises(StateError) as caught:
        state_from_objects(objects, name)
    assert str(caught.value) == message
