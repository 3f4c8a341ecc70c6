"""Run by test_module.ThreadRaceTest in a child interpreter (a crash must fail the test, not end it).

One thread calls the functions that release the GIL on a Schedule, a CostModel and a Timeline
while another thread keeps assigning those objects' lists anew (freeing the old ones). Each call
must see one consistent object: its answer is one of the answers for the values assigned. Exits
0 when every answer was one of those; a crash, a garbage read or a wrong answer exits non-zero.
"""

import sys
import threading

import pipeworks as pw

K, M = 8, 128
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 40


def answers_for(assign, choices, call):
    """What call() answers for each of the choices assigned."""
    answers = []
    for choice in choices:
        assign(choice)
        answers.append(call())
    return answers


def keep_assigning(stop, assign, choices):
    i = 0
    while not stop.is_set():
        assign(choices[i % len(choices)])
        i += 1


def race(assign, choices, call, rounds=ROUNDS):
    """Calls call() `rounds` times while another thread assigns; each answer must be one of those
    call() gives for a choice assigned beforehand."""
    answers = answers_for(assign, choices, call)
    stop = threading.Event()
    thread = threading.Thread(target=keep_assigning, args=(stop, assign, choices))
    thread.start()
    try:
        for _ in range(rounds):
            got = call()
            if got not in answers:
                sys.exit(f"{call.__name__}: an answer matching none of the assigned values: {str(got)[:300]}")
    finally:
        stop.set()
        thread.join()


def main():
    sys.setswitchinterval(1e-5)  # the threads take turns often: many chances to meet mid-call
    schedule = pw.generate("gpipe", K, M)
    programs = [pw.generate(kind, K, M).programs for kind in ("gpipe", "1f1b")] + [[[] for _ in range(K)]]
    assign_programs = lambda p: setattr(schedule, "programs", p)  # noqa: E731
    for call in (lambda: [repr(d) for d in pw.validate(schedule)], lambda: pw.render_grid(schedule),
                 lambda: pw.lower_comm(schedule).program_strings(), lambda: pw.add_recompute(schedule).program_strings()):
        race(assign_programs, programs, call)

    schedule = pw.generate("1f1b", K, M)
    cost = pw.uniform_cost_model(K, 1000, 2000)
    fast, slow = cost.stages, cost.stages
    for stage in slow:
        stage.forward_ns = 3000

    def simulate():
        try:
            return pw.simulate(schedule, cost).makespan_ns
        except pw.Error as e:
            return str(e)
    race(lambda s: setattr(cost, "stages", s), [fast, slow, slow[:2]], simulate, rounds=25 * ROUNDS)  # a short call

    cost.stages = fast
    timeline = pw.simulate(schedule, cost).timeline
    spans = timeline.spans
    assign_spans = lambda s: setattr(timeline, "spans", s)  # noqa: E731
    for call in (lambda: pw.terminal_grid(timeline), lambda: pw.svg_gantt([timeline]),
                 lambda: pw.chrome_trace_json([timeline])):
        race(assign_spans, [spans, spans[: len(spans) // 3], []], call)


if __name__ == "__main__":
    main()
