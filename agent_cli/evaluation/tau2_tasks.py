"""τ²-bench retail tasks as eval cases (`agent eval tau2 tasks.json --store-file db.json`),
read unchanged from τ²'s `data/tau2/domains/retail/tasks.json`:

- the user scenario becomes the simulated customer: its reason for the call and its task
  instructions (and persona) the customer's instructions, `known_info` and `unknown_info` what
  they know and do not;
- the gold actions become the reference: replayed through our tools on a copy of the store, the
  store they leave is the one a conversation must leave (reads change nothing; a hand-over among
  them is expected as `handover`);
- `communicate_info` becomes the facts the agent must say;
- the shop approves every write in these runs (`approve`); the customer's consent is still
  required, in code, as always.

A task whose gold actions name a tool agent-cli does not have is reported and skipped, not
failed. The file is checked before anything runs: a malformed one is one line naming the task
and the field (exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agent_cli.domain.records import DeskData
from agent_cli.errors import CaseFileError
from agent_cli.evaluation.cases import MAX_FILE_BYTES, DeskExpectations, EvalCase, ReferenceWrite
from agent_cli.evaluation.customer import Persona
from agent_cli.text import read_json_file
from agent_cli.tools.offered import DESK, SEED
from agent_cli.validation_text import describe_fields_error

TOOLS = frozenset((*SEED, *DESK))  # what a gold action may name
HAND_OVER = "transfer_to_human_agents"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Instructions(_Model):
    reason_for_call: str = ""
    task_instructions: str = ""
    known_info: str | None = None
    unknown_info: str | None = None


class _Scenario(_Model):
    persona: str | None = None
    instructions: _Instructions | str


class _Action(_Model):
    name: str
    arguments: dict[str, Any] = {}


class _Criteria(_Model):
    actions: list[_Action] | None = None
    communicate_info: list[str] | None = None


class _Task(_Model):
    id: str
    user_scenario: _Scenario
    evaluation_criteria: _Criteria | None = None


@dataclass(frozen=True, slots=True)
class Tau2Tasks:
    cases: tuple[EvalCase, ...]
    skipped: tuple[str, ...]  # each: the task and why


def load_tau2(path: Path, shop: DeskData) -> Tau2Tasks:
    """The tasks of τ²'s `tasks.json` at `path` as cases on `shop` (its `db.json`)."""
    raw = read_json_file(path, max_bytes=MAX_FILE_BYTES * 4, error=CaseFileError)
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise CaseFileError(f"{path}: expected τ²-bench's tasks.json: a list of task objects")
    cases, skipped = [], []
    for number, item in enumerate(raw, start=1):
        task = _task(item, f"{path}: task {number}")
        unknown = sorted({a.name for a in _actions(task)} - TOOLS)
        if unknown:
            skipped.append(f"task {task.id}: no tool named {unknown[0]!r} here")
            continue
        cases.append(_case(task, shop))
    if not cases and not skipped:
        raise CaseFileError(f"{path}: no tasks")
    return Tau2Tasks(tuple(cases), tuple(skipped))


def _task(item: dict[str, Any], where: str) -> _Task:
    try:
        return _Task.model_validate(item)
    except ValidationError as exc:
        named = f" ({item['id']!r})" if isinstance(item.get("id"), str) else ""
        raise CaseFileError(f"{where}{named}: {describe_fields_error(exc, _Task)}") from None


def _actions(task: _Task) -> list[_Action]:
    return (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []


def _case(task: _Task, shop: DeskData) -> EvalCase:
    actions = _actions(task)
    facts = (task.evaluation_criteria.communicate_info or []) if task.evaluation_criteria else []
    persona = _persona(task.user_scenario)
    handover = any(action.name == HAND_OVER for action in actions)
    return EvalCase(
        id=f"tau2-{task.id}",
        question=" ".join(persona.instructions.split()),
        approve=True,
        conversation=True,
        start=shop,
        reference=tuple(ReferenceWrite(tool=a.name, args=a.arguments) for a in actions),
        facts=tuple(str(fact) for fact in facts),
        customer=persona,
        desk=DeskExpectations(handover=True) if handover else DeskExpectations(),
    )


def _persona(scenario: _Scenario) -> Persona:
    given = scenario.instructions
    if isinstance(given, str):
        return Persona(_joined(scenario.persona, given))
    instructions = _joined(scenario.persona, given.reason_for_call, given.task_instructions)
    return Persona(instructions, given.known_info or "", given.unknown_info or "")


def _joined(*parts: str | None) -> str:
    return "\n\n".join(part.strip() for part in parts if part and part.strip())
