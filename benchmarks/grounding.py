"""What the grounding check costs. Prints figures; asserts nothing.

    python benchmarks/grounding.py [--runs N]

The in-process loop overhead per step (a 3-step scripted run, no tools doing work, no rendering)
with the check off and on, and the check's own time on a typical answer and on the worst a model
may send (a 20,000-character answer naming 1,000 orders). The check runs once per final answer;
its per-step share is that time over the run's steps.

Claims (issue 48, point 3): precision and recall of refusing what an answer says was done, over
the labelled corpus (tests/claims_corpus.py: each sentence after a run that did nothing of the
kind and after one that did; the store's facts), and the time to read a 2,000-character answer.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' corpus

from agent_cli.core.decisions import CallTool, FinalAnswer, Step
from agent_cli.core.loop import run
from agent_cli.core.seams import AnswerCheck, Observation, ToolSpec
from agent_cli.core.tool_outcomes import Read
from agent_cli.policy.grounding import ground_answer, unfounded_claim
from agent_cli.providers.scripted import ScriptedModel

STEPS = 3
TYPICAL = "Yes, order A100 is refundable: it was delivered 12 days ago, within the 30-day window."
WORST = " ".join(f"Order X{i:04d} is fine." for i in range(1000))


class NullTools:
    def specs(self) -> tuple[ToolSpec, ...]:
        return (ToolSpec("lookup_order", "d", {}), ToolSpec("refund_policy", "d", {}))

    def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float = 0.0) -> Observation:
        return Observation("ok")


def median_s(work: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def loop_run(check: AnswerCheck | None) -> Callable[[], object]:
    script = [
        CallTool(tool="lookup_order", args={"order_code": "A100"}),
        CallTool(tool="refund_policy"),
        FinalAnswer(answer=TYPICAL),
    ]
    tools = NullTools()

    def once() -> None:
        for _event in run(
            "Is order A100 refundable?", ScriptedModel(script), tools, check_answer=check
        ):
            pass

    return once


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=lambda v: max(int(v), 1), default=3000)
    runs = parser.parse_args().runs
    history = (  # what the loop hands the check at the end of the scripted run
        Step(1, CallTool(tool="lookup_order", args={"order_code": "A100"}), "ok", False),
        Step(2, CallTool(tool="refund_policy"), "ok", False),
    )
    off_samples: list[float] = []
    on_samples: list[float] = []
    for _ in range(10):  # alternate, so drift in the machine's load hits both alike
        off_samples.append(median_s(loop_run(None), max(runs // 10, 1)) / STEPS)
        on_samples.append(median_s(loop_run(ground_answer), max(runs // 10, 1)) / STEPS)
    off, on = statistics.median(off_samples), statistics.median(on_samples)
    typical = median_s(lambda: ground_answer(TYPICAL, history), runs)
    figures = median_s(
        lambda: ground_answer(TYPICAL, history, question="Is A100 refundable?", today="2026-10-13"),
        runs,
    )
    worst = median_s(lambda: ground_answer(WORST, history), max(runs // 100, 5))
    print(f"loop overhead per step, check off     {off * 1e6:9.1f} us")
    print(f"loop overhead per step, check on      {on * 1e6:9.1f} us ({(on - off) / off:+.1%})")
    print(f"check, typical answer, per run         {typical * 1e6:9.1f} us")
    print(
        f"check, typical answer, per step        {typical / STEPS * 1e6:9.1f} us "
        f"({typical / STEPS / off:.1%} of the per-step overhead)"
    )
    print(f"check with its figures (dates, amounts) {figures * 1e6:9.1f} us per run")
    print("(the check runs once per final answer: its per-step share falls as runs get longer)")
    print(f"check, worst answer ({len(WORST):,} chars, 1,000 codes) {worst * 1e3:7.2f} ms")
    claims_figures(runs)


def claims_figures(runs: int) -> None:
    from tests.claims_corpus import FACTS, HELD_OUT, HELD_OUT_2, HELD_OUT_3, HELD_OUT_4, HELD_OUT_5
    from tests.unit.policy.test_claims import CLAIMS, done, history

    judged = _judged(CLAIMS)
    for _kind, sentence, status in FACTS:
        shown = history(Read("A104", status, 32_000))
        judged.append((False, unfounded_claim(sentence, shown) is not None))
    print(f"claims corpus: {len(CLAIMS) + len(FACTS)} sentences, {_figures(judged)}")
    sets = (
        ("held out, tuned on since (1)", HELD_OUT),
        ("held out, tuned on since (2)", HELD_OUT_2),
        ("held out, tuned on since (3)", HELD_OUT_3),
        ("held out, tuned on since (4)", HELD_OUT_4),
        ("held out (5), never tuned on", HELD_OUT_5),
    )
    for name, held_out in sets:
        print(f"claims {name}: {len(held_out)} sentences, {_figures(_judged(held_out))}")
    sentences = [sentence for _, sentence in CLAIMS]
    answer = ""
    while len(answer) < 2000:
        answer += sentences[len(answer) % len(sentences)] + " "
    answer = answer[:2000]
    made = history(*(done(k, "B200") for k in ("cancel", "refund", "address", "handover")))
    per_answer = median_s(lambda: unfounded_claim(answer, made), max(runs // 10, 50))
    print(f"claims read and checked, a 2,000-character answer: {per_answer * 1e3:.3f} ms")


def _judged(sentences: Any) -> list[tuple[bool, bool]]:
    """Each sentence after a run that made nothing of its kind, and after one that made it:
    (should be refused, was refused)."""
    from tests.unit.policy.test_claims import _order, done, history, waiting

    judged = []
    for kind, sentence in sentences:
        order = _order(sentence)
        nothing = history(*waiting(kind or "cancel", order))
        judged.append((kind is not None, unfounded_claim(sentence, nothing) is not None))
        if kind is not None:
            made = history(done(kind, order))
            judged.append((False, unfounded_claim(sentence, made) is not None))
    return judged


def _figures(judged: list[tuple[bool, bool]]) -> str:
    caught = sum(1 for want, got in judged if want and got)
    refused = sum(1 for _, got in judged if got)
    wanted = sum(1 for want, _ in judged if want)
    precision = f"{caught / refused:.1%}" if refused else "-"
    return (
        f"{len(judged)} judgements: precision {precision}, recall {caught / wanted:.1%} "
        f"({caught} of {wanted} false claims refused, {refused - caught} true answers refused)"
    )


if __name__ == "__main__":
    main()
