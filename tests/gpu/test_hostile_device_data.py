"""Hostile device data for the grouped GEMMs (tests/gpu/hostile_device_data.py: ks_tensor, masked_m, psum / packed
ends and group ids that disagree with what the host knows): each case must give the clamped meaning of its values on
every computed row and leave every other row untouched, never hang and never fault. The cases run in a worker process
that reports case by case; a case with no answer within CASE_TIMEOUT_S seconds fails as a hang (the worker is killed
and a fresh one takes the remaining cases), a worker that dies fails the case it was running.

Run: pytest tests/gpu/test_hostile_device_data.py
"""
import os
import queue
import subprocess
import sys
import threading

import pytest

from sm90_torch import require_torch_on_sm90

require_torch_on_sm90("CUDA tensors")

from hostile_device_data import CASES  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CASE_TIMEOUT_S = 90  # a case's kernels compile on first use (~1 s each); a hang is forever
START_TIMEOUT_S = 180  # importing torch and starting CUDA in a fresh worker, then its first case


def forward_lines(stream, lines):
    """Every line of `stream` into the queue `lines`, then None at its end."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def run_cases(names):
    """{case: "ok" | why it failed}, each case run once in a worker process under the timeouts."""
    results = {}
    pending = list(names)
    while pending:
        worker = subprocess.Popen([sys.executable, os.path.join(HERE, "hostile_device_data.py"), *pending], cwd=HERE,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = queue.Queue()
        threading.Thread(target=forward_lines, args=(worker.stdout, lines), daemon=True).start()
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
        unreported = [n for n in pending if n not in results]
        if unreported == pending:  # nothing started: the worker cannot run at all
            for n in pending:
                results[n] = f"the worker ran no case: {' | '.join(tail[-8:])}"
        pending = [n for n in pending if n not in results]
    return results


@pytest.fixture(scope="module")
def results():
    return run_cases(list(CASES))


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_device_data(case, results):
    assert results[case] == "ok", results[case]
