"""The observe-reason-act loop.

`run()` is a generator of events. It never prints, never logs and imports no Typer, Rich or
httpx: the edges (CLI, UI, tracing) decide what to do with each event. Limits are enforced here,
in code, whatever the model says. When a run ends for any reason other than an answer, the loop
first yields a `RunFinished` with the matching status and then raises, so every consumer sees
the final record before the error reaches the CLI's error boundary. A KeyboardInterrupt that
arrives while the consumer holds an event can be thrown into the generator (`events.throw`) and
is recorded the same way.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import date
from typing import TypedDict, Unpack, assert_never, cast

from agent_cli.core.budget import Limits, RunState
from agent_cli.core.decisions import (
    AskUser,
    CallTool,
    Decision,
    FinalAnswer,
    Step,
    Usage,
    not_run,
)
from agent_cli.core.events import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    ModelCalled,
    ModelDecided,
    QuestionAsked,
    RepairCause,
    RepairRequested,
    RunStarted,
    RunStatus,
    ToolObserved,
)
from agent_cli.core.seams import (
    FAIL_CLOSED,
    AnswerCheck,
    ApprovalNeeded,
    ApprovalVerdict,
    DeadlineExceeded,
    Exchange,
    ModelCall,
    ModelReply,
    ModelRequest,
    Observation,
    ReasoningModel,
    Reply,
    TextDelta,
    Toolbox,
    ToolSpec,
    no_text,
)
from agent_cli.core.tool_outcomes import Denied, Failed, Replied
from agent_cli.dates import system_today
from agent_cli.errors import (
    AgentError,
    Interrupted,
    LimitReached,
    MalformedReply,
    MaxStepsExceeded,
    NeedsInput,
    RunTimedOut,
    Terminated,
    Ungrounded,
)
from agent_cli.text import mask_secrets, valid_text

# The clocks a run reads unless given others, bound when the loop is imported (as defaults in a
# signature were): a test that patches the time module for a view does not reach a run.
_MONOTONIC = time.monotonic
_WALL = time.time


class LoopOptions(TypedDict, total=False):
    """What a run may be given besides its goal, model and tools; each has a default."""

    limits: Limits | None  # the circuit breakers (default: Limits())
    today: date | None  # the date the run is answered as of (default: the system's)
    conversation: tuple[Exchange, ...]  # the earlier turns the model is shown
    check_answer: AnswerCheck | None  # a final answer checked before it is given (grounding)
    on_text: Callable[[TextDelta], None] | None  # a streaming model's text, for display only
    run_id: str | None  # default: a new random one
    clock: Callable[[], float]  # monotonic seconds, for limits and durations
    wall: Callable[[], float]  # epoch seconds, for the events' timestamps
    instructions: str  # the shop's own instructions
    hear: Callable[[str, str], str | None] | None  # reads a reply to a question in code
    customer: str | None  # the customer the conversation identified before the run
    language: str | None  # the channel's language, when the words say none


def run(
    goal: str, model: ReasoningModel, toolbox: Toolbox, **given: Unpack[LoopOptions]
) -> Generator[Event, Reply, None]:
    """Run the loop on `goal`, yielding an event for everything that happens. A consumer
    answers a `QuestionAsked` with `send(reply)` and an `ApprovalRequested` with a ApprovalVerdict.
    `on_text` sees a streaming model's text as it arrives, for display only: it is not an
    event, and nothing is decided on it (the decision comes whole, as ModelDecided). `hear` reads
    a person's reply to a question in code (a yes to the change it put to them), and may add a
    note for the model."""
    limits = given.get("limits") or Limits()
    clock, wall = given.get("clock", _MONOTONIC), given.get("wall", _WALL)
    state = RunState(
        run_id=given.get("run_id") or uuid.uuid4().hex,
        limits=limits,
        clock=clock,
        wall=wall,
        started=clock(),
    )
    conversation = given.get("conversation", ())
    check_answer = given.get("check_answer")
    instructions = given.get("instructions", "")
    customer = given.get("customer")
    context = _Context(
        goal=goal,
        model=model,
        toolbox=toolbox,
        specs=toolbox.specs(),
        today=given.get("today") or system_today(),
        conversation=conversation,
        check_answer=check_answer,
        on_text=given.get("on_text") or no_text,
        instructions=instructions,
        hear=given.get("hear"),
        customer=customer,
        language=given.get("language"),
    )
    try:
        yield RunStarted(
            run_id=state.run_id,
            ts=wall(),
            goal=goal,
            provider=model.provider,
            model=model.model,
            max_steps=limits.max_steps,
            timeout_s=limits.timeout_s,
            today=context.today.isoformat(),
            tools=tuple(spec.name for spec in context.specs),
            remembered_turns=len(conversation),
            grounding=check_answer is not None,
            instructions_sha256=hashlib.sha256(instructions.encode()).hexdigest()
            if instructions
            else None,
            instructions_chars=len(instructions),
            customer_identified=customer is not None,
        )
        answer = yield from _react(context, state)
    except KeyboardInterrupt as interrupt:
        error = Interrupted(terminated=isinstance(interrupt, Terminated))
        yield state.finish("interrupted", error=str(error))
        raise error from None
    except NeedsInput as exc:
        yield state.finish("needs_input", error=str(exc))
        raise
    except LimitReached as exc:
        status = cast(RunStatus, exc.status)  # every LimitReached names a RunStatus (tested)
        last = None
        if limits.answer_at_limit and status in ANSWER_AT_LIMIT:
            last = yield from _last_word(context, state)
        yield state.finish(status, error=str(exc), answer=last, incomplete=last is not None)
        raise
    except AgentError as exc:
        yield state.finish("error", error=str(exc))
        raise
    except Exception as exc:  # a failure nobody foresaw is still an ending, and recorded
        yield state.finish("error", error=f"internal error ({type(exc).__name__}: {exc})")
        raise
    yield state.finish(state.answered(), answer=answer)


ANSWER_AT_LIMIT = ("max_steps", "no_progress")  # stops worth one more tool-less call after


@dataclass(frozen=True, slots=True, kw_only=True)
class _Context:
    """What stays the same for every step of one run."""

    goal: str
    model: ReasoningModel
    toolbox: Toolbox
    specs: tuple[ToolSpec, ...]  # offered at the start (the run's record names them)
    today: date
    conversation: tuple[Exchange, ...]
    check_answer: AnswerCheck | None
    on_text: Callable[[TextDelta], None]
    instructions: str = ""
    hear: Callable[[str, str], str | None] | None = None
    customer: str | None = None  # identified before the run (ModelRequest.customer)
    language: str | None = None  # the channel's (ModelRequest.language)

    def answer_problem(self, final: FinalAnswer, history: tuple[Step, ...]) -> str | None:
        check = self.check_answer
        return check(final.answer, history, final.claims or ()) if check else None


def _react(context: _Context, state: RunState) -> Generator[Event, Reply, str]:
    for number in range(1, state.limits.max_steps + 1):
        state.check_deadline()
        state.check_budgets()
        state.steps = number
        consulted = yield from _consult(context, state, number)
        if consulted is None:  # an unusable reply, fed back as a repair
            continue
        reply, latency_ms = consulted
        decisions = _distinct_ids(reply.decisions, state)
        allowed = decisions[: state.limits.max_calls_per_reply]
        steps: list[Step] = []
        for decision in allowed:
            yield _decided(decision, reply.usage, latency_ms, number, state)
            match decision:
                case FinalAnswer(answer=answer) as final:
                    if (problem := context.answer_problem(final, state.history)) is None:
                        return answer
                    yield _refuse_answer(answer, problem, number, state)
                case CallTool() as call:
                    state.check_deadline()
                    step, rejected = yield from _act(call, number, context, state)
                    steps.append(step)
                    if rejected:
                        yield _repair(step.observation, "call", number, state)
                case AskUser() as question:
                    step = yield from _ask(question, number, context, state)
                    steps.append(step)
                case _ as unreachable:
                    assert_never(unreachable)
        if skipped := decisions[len(allowed) :]:
            steps += not_run(skipped, number, state.limits.max_calls_per_reply)
            yield _repair(steps[-1].observation, "calls", number, state)
        state.history = (*state.history, *steps)
    raise MaxStepsExceeded(state.limits.max_steps)


def _refuse_answer(answer: str, problem: str, number: int, state: RunState) -> RepairRequested:
    """An answer that failed the check goes back to the model as a repair; past the repair
    budget the run ends as ungrounded (the trace keeps the answer in its decision record)."""
    if state.repairs >= state.limits.max_repairs:
        raise Ungrounded(problem)
    state.history = (*state.history, Step.unusable(number, problem, answer))
    return _repair(problem, "answer", number, state)


def _distinct_ids(decisions: tuple[Decision, ...], state: RunState) -> tuple[Decision, ...]:
    """The decisions with every call id unique in the run: a lax server may repeat an id, and
    the next request must answer each id exactly once."""
    unique: list[Decision] = []
    for decision in decisions:
        ref = None if isinstance(decision, FinalAnswer) else decision.call_id
        if ref is None:
            unique.append(decision)
            continue
        fresh, n = ref, 1
        while fresh in state.call_ids:
            n += 1
            fresh = f"{ref}_{n}"
        state.call_ids.add(fresh)
        unique.append(decision if fresh == ref else decision.model_copy(update={"call_id": fresh}))
    return tuple(unique)


def _consult(
    context: _Context, state: RunState, number: int, *, final: bool = False
) -> Generator[Event, Reply, tuple[ModelReply, float] | None]:
    """One model call with its events; None when the reply was unusable (and became a repair)."""
    calls: list[ModelCall] = []
    asked = state.clock()
    request = ModelRequest(
        goal=context.goal,
        today=context.today,
        tools=context.toolbox.specs(),
        history=state.visible_history(),
        deadline=state.deadline,
        on_call=calls.append,
        conversation=context.conversation,
        final=final,
        on_text=context.on_text,
        instructions=context.instructions,
        customer=context.customer,
        language=context.language,
    )
    try:
        reply = context.model.decide(request)
    except MalformedReply as exc:
        yield from _calls(calls, number, state)
        state.usage += exc.usage if isinstance(exc.usage, Usage) else Usage()
        if not final:
            state.history = (*state.history, Step.unusable(number, exc.problem, exc.raw))
            yield _repair(exc.problem, "reply", number, state)
        return None
    except DeadlineExceeded:
        yield from _calls(calls, number, state)
        raise RunTimedOut(state.limits.timeout_s) from None
    except BaseException:
        yield from _calls(calls, number, state)
        raise
    yield from _calls(calls, number, state)
    state.usage += reply.usage
    state.last_usage = reply.usage
    return reply, (state.clock() - asked) * 1000


def _last_word(context: _Context, state: RunState) -> Generator[Event, Reply, str | None]:
    """After a step limit: one call without tools for the best answer from what is known.
    Best effort: any failure just means no answer."""
    number = state.steps + 1
    try:
        state.check_deadline()
        state.check_budgets()
        consulted = yield from _consult(context, state, number, final=True)
    except Exception:
        return None
    if consulted is None:
        return None
    reply, latency_ms = consulted
    decision = reply.decisions[0]
    if not isinstance(decision, FinalAnswer):
        return None
    yield _decided(decision, reply.usage, latency_ms, number, state)
    if context.answer_problem(decision, state.history) is not None:
        return None  # an ungrounded last word is no answer
    return decision.answer


def _ask(
    question: AskUser, number: int, context: _Context, state: RunState
) -> Generator[Event, Reply, Step]:
    """Yield the question; the consumer sends the reply back, or None when nobody can answer."""
    started = state.clock()
    reply = yield QuestionAsked(
        run_id=state.run_id, ts=state.wall(), step=number, question=question.question
    )
    state.person_answered(since=started)
    if not isinstance(reply, str):
        raise NeedsInput(question.question)
    replied = Replied(valid_text(reply))  # their words; the desk's note is for the model only
    note = context.hear(question.question, replied.words) if context.hear else None
    reply = replied.words if note is None else f"{replied.words}\n{note}"
    call = question.as_call()
    yield ToolObserved(
        run_id=state.run_id,
        ts=state.wall(),
        step=number,
        tool=call.tool,
        args=dict(call.args),
        observation=reply,
        is_error=False,
        duration_ms=(state.clock() - started) * 1000,
        outcome=replied,
    )
    return Step(number, call, reply, False, outcome=replied)


def _calls(calls: list[ModelCall], number: int, state: RunState) -> Generator[Event, None, None]:
    for call in calls:
        yield ModelCalled(
            run_id=state.run_id,
            ts=state.wall(),
            step=number,
            attempt=call.attempt,
            status=call.status,
            latency_ms=call.latency_ms,
            usage=call.usage,
            retry_in_s=call.retry_in_s,
            error=call.error,
            fallback=call.fallback,
        )


def _decided(
    decision: Decision, usage: Usage, latency_ms: float, number: int, state: RunState
) -> ModelDecided:
    return ModelDecided(
        run_id=state.run_id,
        ts=state.wall(),
        step=number,
        decision=decision,
        usage=usage,
        latency_ms=latency_ms,
    )


def _repair(problem: str, cause: RepairCause, number: int, state: RunState) -> RepairRequested:
    """Count one repair (raising past the budget) and describe it for the trace."""
    state.count_repair(problem)
    return RepairRequested(
        run_id=state.run_id,
        ts=state.wall(),
        step=number,
        problem=problem,
        repairs=state.repairs,
        cause=cause,
    )


def _act(
    call: CallTool, number: int, context: _Context, state: RunState
) -> Generator[Event, Reply, tuple[Step, bool]]:
    """Run one call (asking for approval when the tool needs it); flag: rejected (a repair)."""
    started = state.clock()
    if call.invalid is not None:  # the provider could not read the arguments: never run it
        observation = Observation.of(Failed(call.invalid), rejected=True)
    elif (repeat := state.repeated(call)) is not None:  # NoProgress if it goes on
        observation = Observation.of(Failed(repeat))
    else:
        time_left = max(state.deadline - state.clock(), 0.0)
        result = context.toolbox.invoke(call.tool, dict(call.args), time_left=time_left)
        if isinstance(result, ApprovalNeeded):
            observation = yield from _approve(call, result, number, state, context.goal)
        else:
            observation = result
    text = state.cut(valid_text(observation.text))
    state.tickets += [observation.ticket] if observation.ticket is not None else []
    yield ToolObserved(
        run_id=state.run_id,
        ts=state.wall(),
        step=number,
        tool=call.tool,
        args=dict(call.args),
        observation=text,
        is_error=observation.is_error,
        duration_ms=(state.clock() - started) * 1000,
        detail=mask_secrets(valid_text(observation.detail)) if observation.detail else None,
        ticket=observation.ticket,
        outcome=(outcome := observation.outcome),
        record=(record := observation.record),
    )
    step = Step(number, call, text, observation.is_error, outcome=outcome, record=record)
    return step, observation.rejected


def _approve(
    call: CallTool, needed: ApprovalNeeded, number: int, state: RunState, goal: str
) -> Generator[Event, Reply, Observation]:
    """A verdict on exactly this call, asked unless a rule gave it; only approving lets it on."""
    verdict = needed.decided
    if verdict is None:
        asked = state.clock()
        answer = yield ApprovalRequested(
            run_id=state.run_id,
            ts=state.wall(),
            step=number,
            tool=call.tool,
            args=dict(call.args),
            summary=needed.summary,
        )
        state.person_answered(since=asked)
        verdict = answer if isinstance(answer, ApprovalVerdict) else FAIL_CLOSED
    if verdict.queue and needed.queue is None:  # this action cannot wait: nobody approved it
        verdict = verdict.cannot_wait()
    queued = needed.queue(state.run_id, goal) if verdict.queue and needed.queue else None
    if (item := queued.queued if queued is not None else None) is not None:
        state.queued.append(item)
    yield ApprovalDecided(
        run_id=state.run_id,
        ts=state.wall(),
        step=number,
        tool=call.tool,
        approved=verdict.approved,
        by=verdict.by,
        reason=verdict.reason,
        queued=item,
        rule=verdict.rule,
    )
    if queued is not None:
        return queued
    if verdict.approved:
        return needed.commit()
    why = verdict.reason or "the operator said no"
    return Observation.of(Denied(f"{needed.summary} was not approved: {why}"))
