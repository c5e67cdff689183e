"""GPU test cases run in a worker process, so that a hang fails its case instead of blocking the suite and a fault
(a sticky CUDA error: the process's context is lost) fails only its case instead of every test after it.

Parent (a test module's fixture): run_cases(command, names) starts `command + names`, reads the worker's report case by
case and restarts a worker for the cases left after a hang (killed after CASE_TIMEOUT_S without an answer) or a death.
Worker (a script): serve(cases, names) runs each named case and prints "start NAME", then "ok NAME" or
"fail NAME: why"; after a CUDA error it exits (3) so that the parent goes on in a fresh process.
"""
import os
import queue
import subprocess
import sys
import threading
import traceback

CASE_TIMEOUT_S = 90  # a case's kernels compile on first use (~1 s each); a hang is forever
START_TIMEOUT_S = 180  # importing torch and starting CUDA in a fresh worker, then its first case


def _forward_lines(stream, lines):
    """Every line of `stream` into the queue `lines`, then None at its end."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def run_cases(command, names, cwd=None):
    """{case: "ok" | why it failed}, each case of `names` run once by a worker `command + names` under the timeouts."""
    results = {}
    pending = list(names)
    while pending:
        worker = subprocess.Popen([*command, *pending], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True)
        lines = queue.Queue()
        threading.Thread(target=_forward_lines, args=(worker.stdout, lines), daemon=True).start()
        current, timeout, tail = None, START_TIMEOUT_S, []
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                worker.kill()
                worker.wait()
                results[current or pending[0]] = f"hung: no result within {timeout} s"
                break
            if line is None:
                worker.wait()
                if current is not None:
                    results[current] = f"worker died (exit {worker.returncode}): {' | '.join(tail[-8:])}"
                break
            line = line.rstrip("\n")
            tail.append(line)
            if line.startswith("start "):
                current, timeout = line[len("start "):], CASE_TIMEOUT_S
            elif line.startswith("ok "):
                results[line[3:]] = "ok"
                current = None
            elif line.startswith("fail "):
                name, _, why = line[5:].partition(": ")
                results[name] = why
                current = None
        if all(n not in results for n in pending):  # nothing started: the worker cannot run at all
            for n in pending:
                results[n] = f"the worker ran no case: {' | '.join(tail[-8:])}"
        pending = [n for n in pending if n not in results]
    return results


def serve(cases, names, label=None):
    """Runs cases[name]() for each of `names`, reporting as run_cases reads it. label(name), where given, is what the
    case's accuracy checks log as their test (PYTEST_CURRENT_TEST, as under pytest)."""
    import torch

    for name in names:
        print(f"start {name}", flush=True)
        if label is not None:
            os.environ["PYTEST_CURRENT_TEST"] = label(name)
        try:
            cases[name]()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001: every failure is reported, by case
            message = f"{type(e).__name__}: {e}".replace("\n", " | ")
            print(f"fail {name}: {message[:2000]}", flush=True)
            traceback.print_exc(file=sys.stdout)
            if "CUDA" in message or "illegal" in message.lower() or "Accelerator" in type(e).__name__:
                sys.exit(3)  # a sticky CUDA error: this process cannot run another case
            continue
        print(f"ok {name}", flush=True)
