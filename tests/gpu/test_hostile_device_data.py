"""Hostile device data for the grouped GEMMs (tests/gpu/hostile_device_data.py: ks_tensor, masked_m, psum / packed
ends and group ids that disagree with what the host knows): each case must give the clamped meaning of its values on
every computed row and leave every other row untouched, never hang and never fault. The cases run in a worker process
that reports case by case (tests/gpu/case_worker.py): a case with no answer within its timeout fails as a hang (the
worker is killed and a fresh one takes the remaining cases), a worker that dies fails the case it was running.

Run: pytest tests/gpu/test_hostile_device_data.py
"""
import os
import sys

import pytest

from sm90_torch import require_torch_on_sm90

require_torch_on_sm90("CUDA tensors")

from case_worker import run_cases  # noqa: E402
from hostile_device_data import CASES  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def results():
    return run_cases([sys.executable, os.path.join(HERE, "hostile_device_data.py")], list(CASES), cwd=HERE)


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_device_data(case, results):
    assert results[case] == "ok", results[case]
